/**
 * The generated document against the one written by hand before it (src/testing/openapi-hand-written.json, the
 * last hand-written /openapi.json, frozen): every path, method, status, media type, parameter, description and
 * component it had is still there, with the same meaning; what the generated one adds or words differently is
 * listed here, so a change of the contract is a change of this list.
 */
import { documentTexts, responseShapes } from '@depthgate/test-utils';
import handWritten from '../testing/openapi-hand-written.json';
import { openApiDocument } from './openapi';

type Json = Record<string, unknown>;

const options = { defaultLimit: 1000, maxLimit: 1_000_000, queryTimeoutMs: 10_000, maxBookDepth: 10_000 };
const generated = openApiDocument(options) as unknown as Json;
const old = handWritten as unknown as Json;

function resolve(doc: Json, value: unknown): Json {
  const ref = (value as { $ref?: string }).$ref;
  if (ref === undefined) return value as Json;
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>((node, key) => (node as Json)[key], doc) as Json;
}

const paths = (doc: Json) => doc.paths as Record<string, Record<string, Json>>;
const operations = (doc: Json) =>
  Object.entries(paths(doc)).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  );

/** A parameter's schema as it constrains values: type, enum, bounds, default, pattern, format. */
function constraints(doc: Json, schema: Json): Json {
  const s = resolve(doc, schema);
  const pick = (k: string) => (s[k] === undefined ? {} : { [k]: s[k] });
  return {
    type: s.type ?? (s.enum ? 'string' : undefined),
    ...pick('enum'),
    ...pick('minimum'),
    ...pick('maximum'),
    ...pick('default'),
    ...pick('pattern'),
    ...pick('format'),
  };
}

describe('the generated OpenAPI document against the hand-written one', () => {
  it('has the same info, servers, security and security schemes', () => {
    for (const key of ['openapi', 'info', 'servers', 'security'])
      expect([key, generated[key]]).toEqual([key, old[key]]);
    expect((generated.components as Json).securitySchemes).toEqual((old.components as Json).securitySchemes);
  });

  it('keeps every description and summary (a longer text may only add to one)', () => {
    const now = [...documentTexts(generated, ['description', 'summary'])];
    const lost = [...documentTexts(old, ['description', 'summary'])].filter((d) => !now.some((n) => n.startsWith(d)));
    expect(lost).toEqual([]);
  });

  it('keeps every path, method, status and media type, and adds only those listed', () => {
    const before = responseShapes(old as never);
    const after = responseShapes(generated as never);
    // A response without content may have gained a body's description: `-` stands for any media type then.
    const kept = (x: string) =>
      after.includes(x) || (x.endsWith(' -') && after.some((a) => a.startsWith(x.slice(0, -1))));
    expect(before.filter((x) => !kept(x))).toEqual([]);
    const api = ['tickers', 'snapshots/{ticker}', 'deltas/{ticker}', 'coverage/{ticker}', 'book/{ticker}'];
    const assets = ['text/html', 'text/javascript', 'text/css', 'image/svg+xml', 'image/png', 'font/woff2'];
    expect(after.filter((x) => !before.includes(x)).sort()).toEqual(
      [
        // /ready and /health describe their bodies; /metrics and /openapi.json are described at all.
        'get /ready 200 application/json',
        'get /ready 503 application/json',
        'get /metrics 200 text/plain',
        'get /openapi.json 200 application/json',
        // The Explorer without its build, the redirect of /explorer/, and the page's files.
        'get /explorer 503 application/json',
        'get /explorer/ 308 text/plain',
        'get /explorer/ 308 text/html',
        ...[...assets, 'application/json', 'application/octet-stream'].map(
          (t) => `get /explorer/assets/{name} 200 ${t}`,
        ),
        'get /explorer/assets/{name} 304 -',
        'get /explorer/assets/{name} 404 application/json',
        // A bug (internal_error) is an answer too.
        ...api.map((p) => `get /api/{exchange}/${p} 500 application/json`),
      ].sort(),
    );
  });

  it('keeps every parameter: where, whether required, its description and what it accepts', () => {
    const params = (doc: Json) =>
      Object.fromEntries(
        operations(doc).flatMap(({ path, method, op }) =>
          ((op.parameters as Json[] | undefined) ?? []).map((p) => {
            const param = resolve(doc, p);
            const key = `${method} ${path} ${String(param.in)}:${String(param.name)}`;
            return [
              key,
              {
                required: param.required ?? false,
                description: param.description,
                schema: constraints(doc, param.schema as Json),
              },
            ];
          }),
        ),
      );
    const before = params(old);
    const after = params(generated);
    for (const [key, was] of Object.entries(before)) {
      const now = after[key];
      expect([key, now?.required]).toEqual([key, was.required]);
      if (was.description !== undefined) expect(String(now?.description)).toContain(String(was.description));
      // fields and include are comma-separated lists: arrays of their names (style form, explode false).
      if (/:(fields|include)$/.test(key)) {
        expect(now?.schema).toEqual({ type: 'array' });
        continue;
      }
      // prefix: longer prefixes are not refused (they match nothing), so no maxLength is claimed.
      const expected = key.endsWith(':prefix') ? { type: 'string' } : was.schema;
      expect([key, now?.schema]).toEqual([key, expected]);
    }
    // New: the Explorer file's name; path parameters gained descriptions.
    expect(Object.keys(after).filter((k) => !(k in before))).toEqual(['get /explorer/assets/{name} path:name']);
  });

  it('keeps every component schema and its fields, with errors by status and coverage by kind', () => {
    const schemas = (doc: Json) => (doc.components as Json).schemas as Record<string, Json>;
    const fields = (doc: Json, name: string): string[] => {
      const s = schemas(doc)[name] as Json;
      const branches = (s.oneOf as Json[] | undefined) ?? (s.allOf as Json[] | undefined) ?? [s];
      return [...new Set(branches.flatMap((b) => Object.keys((resolve(doc, b).properties as Json) ?? {})))].sort();
    };
    const renamed: Record<string, string[]> = {
      Error: ['Error400', 'Error401', 'Error404', 'Error429', 'Error500', 'Error503'],
    };
    for (const name of Object.keys(schemas(old))) {
      for (const now of renamed[name] ?? [name]) {
        if (name === 'KindCoverage') {
          // `books` only where it is given: snapshots' coverage (SnapshotCoverage).
          expect(fields(generated, 'KindCoverage')).toEqual(fields(old, name).filter((f) => f !== 'books'));
          expect(fields(generated, 'SnapshotCoverage')).toEqual(fields(old, name));
        } else expect([now, fields(generated, now)]).toEqual([now, fields(old, name)]);
      }
    }
  });
});
