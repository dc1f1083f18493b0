import { ContractChecker, documentTexts, responseShapes, type OpenApiDocument } from '@depthgate/test-utils';
import { loadConfig } from './config';
import { openApiDocument } from './openapi';
import { createPlatforms } from './platforms/registry';
import handWritten from './testing/openapi-hand-written.json';

interface Doc {
  paths: Record<string, Record<string, { responses?: Record<string, unknown>; requestBody?: unknown }>>;
  components: { securitySchemes: Record<string, { type: string; scheme?: string }> };
  security: Record<string, string[]>[];
}

describe('the gateway’s OpenAPI document', () => {
  const doc = openApiDocument(createPlatforms(loadConfig({}))) as unknown as Doc;

  it('has a POST operation exactly on the read-only POST paths, with 413 and 415', () => {
    const withPost = Object.entries(doc.paths)
      .filter(([, ops]) => ops.post)
      .map(([path]) => path)
      .sort();
    expect(withPost).toEqual([
      '/api/v1/venue-a-clob/batch-prices-history',
      '/api/v1/venue-a-clob/books',
      '/api/v1/venue-a-clob/last-trades-prices',
      '/api/v1/venue-a-clob/midpoints',
      '/api/v1/venue-a-clob/orders-scoring',
      '/api/v1/venue-a-clob/prices',
      '/api/v1/venue-a-clob/spreads',
      '/api/v1/venue-a-us/v1/order/preview',
    ]);
    const books = doc.paths['/api/v1/venue-a-clob/books']?.post;
    expect(books?.requestBody).toMatchObject({ required: true, content: { 'application/json': {} } });
    expect(Object.keys(books?.responses ?? {})).toEqual(expect.arrayContaining(['200', '405', '413', '415']));
    expect(doc.paths['/api/v1/{platform}/{resource}']?.post).toBeUndefined();
    expect(doc.paths['/api/v1/{platform}/']?.get).toBeDefined();
  });

  it('offers HTTP Basic beside the X-API-Key header', () => {
    expect(doc.components.securitySchemes.basic).toEqual(expect.objectContaining({ type: 'http', scheme: 'basic' }));
    expect(doc.security).toEqual([{ apiKey: [] }, { basic: [] }]);
  });
});

/**
 * The generated document against the one written by hand before it (testing/openapi-hand-written.json, frozen):
 * every path, status, media type, parameter and description kept; what it adds is listed here.
 */
describe('the generated OpenAPI document against the hand-written one', () => {
  const generated = openApiDocument(createPlatforms(loadConfig({})));
  const old = handWritten as unknown as OpenApiDocument;

  it('keeps info, security and security schemes, every description and summary', () => {
    expect(generated.info).toEqual((old as unknown as { info: unknown }).info);
    expect(generated.security).toEqual((old as unknown as { security: unknown }).security);
    expect((generated.components as { securitySchemes: unknown }).securitySchemes).toEqual(
      (old.components as { securitySchemes: unknown }).securitySchemes,
    );
    const now = documentTexts(generated, ['description', 'summary']);
    expect([...documentTexts(old, ['description', 'summary'])].filter((d) => !now.has(d))).toEqual([]);
  });

  it('keeps every path, method, status and media type; adds the bodies of its own answers and /asyncapi.json', () => {
    const before = responseShapes(old);
    const after = responseShapes(generated);
    const kept = (x: string) =>
      after.includes(x) || (x.endsWith(' -') && after.some((a) => a.startsWith(x.slice(0, -1))));
    expect(before.filter((x) => !kept(x))).toEqual([]);
    expect(after.filter((x) => !before.includes(x)).sort()).toEqual(
      [
        'get /ready 200 application/json',
        'get /ready 503 application/json',
        'get /metrics 200 text/plain',
        'get /openapi.json 200 application/json',
        'get /asyncapi.json 200 application/json',
      ].sort(),
    );
  });

  it('keeps every parameter with its description, schema and whether it is required', () => {
    type Param = { name: string; in: string; required?: boolean; description?: string; schema?: unknown };
    const params = (doc: OpenApiDocument) => {
      const out: Record<string, Param> = {};
      for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
        const shared = (item.parameters as Param[] | undefined) ?? [];
        for (const [method, op] of Object.entries(item)) {
          if (method === 'parameters') continue;
          for (const p of [...shared, ...(((op as { parameters?: Param[] }).parameters as Param[]) ?? [])]) {
            out[`${method} ${path} ${p.in}:${p.name}`] = p;
          }
        }
      }
      return out;
    };
    const before = params(old);
    const after = params(generated);
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    for (const [key, p] of Object.entries(before)) {
      const { schema, ...rest } = p;
      const now = after[key] as Param;
      expect([key, { ...now, schema: undefined }]).toEqual([key, { ...rest, schema: undefined }]);
      // The platform's enum gained its type ("string").
      expect([key, now.schema]).toEqual([key, { type: 'string', ...(schema as object) }]);
    }
  });

  it('gives examples of errors that keep the contract', async () => {
    const checker = await ContractChecker.create(generated);
    const examples = Object.entries(generated.paths as Record<string, OperationWithExamples>).flatMap(([path, item]) =>
      Object.entries(item.get?.responses ?? {}).flatMap(([status, r]) => {
        const example = r.content?.['application/json']?.example;
        return example === undefined ? [] : [{ path, status: Number(status), example }];
      }),
    );
    expect(examples.length).toBeGreaterThan(8);
    for (const { path, status, example } of examples) {
      const url = path.replace('{platform}', 'venue-b').replace('{resource}', 'markets');
      const headers = { 'content-type': 'application/json' };
      expect(
        checker.check({ method: 'GET', url, status, headers, body: Buffer.from(JSON.stringify(example)) }),
      ).toEqual([]);
    }
  });
});

interface OperationWithExamples {
  get?: { responses?: Record<string, { content?: Record<string, { example?: unknown }> }> };
}
