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
 * A JSON value as text, for a message that names what a sender gave: a string as it is, anything else as its JSON.
 * Never throws: not `String(v)`, which calls a `toString` member the sender chose (`{"toString":0}` makes it throw),
 * and an array or object nested too deep for `JSON.stringify` (`JSON.parse` takes far deeper) is named by its kind.
 */
export function valueText(v: unknown): string {
  if (typeof v === 'string') return v;
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return Array.isArray(v) ? '[…]' : '{…}';
  }
}

/**
 * Whether `JSON.stringify` can write a value a sender gave (parsed with `JSON.parse`): not an array or object nested
 * deeper than its stack allows, which `JSON.parse` takes. A value echoed back as JSON (Kalshi's command `id`) is
 * checked first, as `valueText` guards a value named in a message.
 */
export function jsonWritable(v: unknown): boolean {
  try {
    JSON.stringify(v);
    return true;
  } catch {
    return false;
  }
}

/** The strings of an array value, or undefined when it is not an array of strings. */
export function stringList(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined;
}
