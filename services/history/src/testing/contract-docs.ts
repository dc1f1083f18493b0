/**
 * The field tables of docs/history.md, rendered from the generated OpenAPI document (so from the contract's
 * schemas, src/contract/bodies.ts): each between `<!-- contract:<Schema>[,<Schema>…] -->` and
 * `<!-- /contract -->`. contract/docs.test.ts fails when a table differs from its schemas, and rewrites them with
 * WRITE_DOCS=1 (src/testing/: not part of the build).
 */
type Schema = {
  $ref?: string;
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  description?: string;
};

/** What the tables call a component schema. */
const NAMES: Record<string, string> = { Timestamp: 'timestamp', Decimal: 'decimal', Gap: 'gap' };

const refName = (s: Schema) => s.$ref?.split('/').at(-1) ?? '';

function typeText(s: Schema, components: Record<string, Schema>): string {
  if (s.$ref !== undefined) {
    const name = refName(s);
    const target = components[name];
    if (NAMES[name] === undefined && target?.properties) return typeText(target, components);
    return NAMES[name] ?? name;
  }
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``;
  if (s.enum) return s.enum.map((v) => `\`${JSON.stringify(v)}\``).join(' \\| ');
  const union = s.anyOf ?? s.oneOf;
  if (union) return union.map((u) => typeText(u, components)).join(' \\| ');
  if (s.type === 'array' && s.items) return `[${typeText(s.items, components)}]`;
  if (s.type === 'object' && s.properties) return `{${Object.keys(s.properties).join(', ')}}`;
  if (Array.isArray(s.type)) return s.type.join(' \\| ');
  return s.type ?? 'any';
}

/** One row per field, across the branches of a union (a field's types joined, its first description). */
export function fieldTable(components: Record<string, Schema>, names: string[]): string {
  const rows = new Map<string, { types: string[]; optional: boolean; description?: string }>();
  for (const name of names) {
    const schema = components[name];
    if (schema === undefined) throw new Error(`no component schema ${name}`);
    for (const branch of schema.oneOf ?? [schema]) {
      for (const [field, s] of Object.entries(branch.properties ?? {})) {
        const row = rows.get(field) ?? { types: [], optional: false };
        for (const t of typeText(s, components).split(' \\| ')) if (!row.types.includes(t)) row.types.push(t);
        row.optional ||= !(branch.required ?? []).includes(field);
        row.description ??= s.description ?? (s.$ref === undefined ? undefined : components[refName(s)]?.description);
        rows.set(field, row);
      }
    }
  }
  const lines = [...rows].map(
    ([field, r]) =>
      `| \`${field}\`${r.optional ? ' (optional)' : ''} | ${r.types.join(' \\| ')} | ${(r.description ?? '').replace(/\|/g, '\\|')} |`,
  );
  return ['| field | type | meaning |', '| --- | --- | --- |', ...lines].join('\n');
}

/** A table's block: its opening line, what is between (no other block: no `<!--`), its closing line. */
const BLOCK = /(<!-- contract:([A-Za-z0-9,]+) -->)\n(?:(?:(?!<!--)[\s\S])*\n)?(<!-- \/contract -->)/g;

/** The document with every table rendered afresh; `names`: the blocks found. */
export function renderTables(markdown: string, components: Record<string, Schema>): { text: string; names: string[] } {
  const names: string[] = [];
  const text = markdown.replace(BLOCK, (_all, open: string, list: string, close: string) => {
    names.push(list);
    return `${open}\n${fieldTable(components, list.split(','))}\n${close}`;
  });
  return { text, names };
}
