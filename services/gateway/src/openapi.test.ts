import { ContractChecker } from '@depthgate/test-utils';
import { loadConfig } from './config';
import { openApiDocument } from './openapi';
import { createPlatforms } from './platforms/registry';

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

describe('the gateway’s generated OpenAPI document', () => {
  const generated = openApiDocument(createPlatforms(loadConfig({})));

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
