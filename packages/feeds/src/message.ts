/** Reading the platforms' JSON feed messages (the recorder's venues and the gateway's stream modules alike). */

/** A message as a JSON object, or undefined (not JSON, or another JSON value). */
export function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A JSON value as text, for a message that names what a sender gave: a string as it is, anything else as its JSON
 * (every value `JSON.parse` made has one). Not `String(v)`: that calls a `toString` member the sender chose, and
 * `{"toString":0}` makes it throw.
 */
export function valueText(v: unknown): string {
  return typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
}

/** The strings of an array value, or undefined when it is not an array of strings. */
export function stringList(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined;
}
