/** The OpenAPI 3.1 description of the history service, served at `/openapi.json`. */
import { EXCHANGE_KEYS } from '@depthgate/auth';
import { ERROR_CODES } from '@depthgate/service-kit';

export function openApiDocument(options: { defaultLimit: number; maxLimit: number; queryTimeoutMs: number }) {
  const error = (description: string) => ({
    description,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  });
  const rowParams = [
    { $ref: '#/components/parameters/exchange' },
    { $ref: '#/components/parameters/ticker' },
    {
      name: 'start_ts',
      in: 'query',
      required: false,
      description:
        'RFC 3339 timestamp; rows at or after it. Clamped to the caller’s window (max_data_age_days, anonymous: last day) and to 2026-03-07T00:00:00Z.',
      schema: { type: 'string', format: 'date-time' },
    },
    {
      name: 'end_ts',
      in: 'query',
      required: false,
      description: 'RFC 3339 timestamp; rows at or before it. Default: no upper bound.',
      schema: { type: 'string', format: 'date-time' },
    },
    {
      name: 'limit',
      in: 'query',
      required: false,
      description: `Maximum rows, applied after sorting by ts so the earliest rows are kept. Default ${options.defaultLimit}, maximum ${options.maxLimit} (a larger value is answered 400 invalid_limit). Snapshots are rounded up to whole books.`,
      schema: { type: 'integer', minimum: 1, maximum: options.maxLimit, default: options.defaultLimit },
    },
  ];
  const common = {
    '400': error('invalid_timestamp (start_ts/end_ts not RFC 3339, or start_ts after end_ts) or invalid_limit'),
    '401': error(
      'unauthorized: a key was given (x-api-key, or HTTP Basic with the key as user name) but is unknown, malformed or revoked',
    ),
    '404': error('unknown_exchange, or unknown_ticker (also for a ticker outside the key’s ticker_prefixes)'),
    '429': error('rate_limited (per key, or per client IP for anonymous callers)'),
    '503': error(
      `service_unavailable (ClickHouse unreachable, or keys cannot be verified) or query_timeout (over the ${options.queryTimeoutMs} ms budget)`,
    ),
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'depthgate history service',
      version: '1.0.0',
      description:
        'Recorded order-book history per exchange and ticker: ticker lists, full-book snapshots and incremental deltas. ' +
        'Rows are sorted by ts ascending; bounds are inclusive; prices and quantities are decimal strings; timestamps are UTC RFC 3339 ' +
        'with milliseconds. Responses are gzip-compressed when the request sends Accept-Encoding: gzip. The key goes in x-api-key or ' +
        'as HTTP Basic (user name). Requests without a key are ' +
        'anonymous: last day of data, rate-limited per IP. Details: docs/history.md.',
    },
    servers: [{ url: '/' }],
    security: [{}, { apiKey: [] }, { basic: [] }],
    paths: {
      '/health': {
        get: {
          summary: 'Liveness',
          security: [],
          responses: {
            '200': {
              description: 'The process is up',
              content: {
                'application/json': {
                  schema: { type: 'object', properties: { status: { const: 'ok' } }, required: ['status'] },
                },
              },
            },
          },
        },
      },
      '/ready': {
        get: {
          summary: 'Readiness: ClickHouse and Redis answer and the process is not draining',
          security: [],
          responses: { '200': { description: 'ready' }, '503': { description: 'not ready or draining' } },
        },
      },
      '/api/{exchange}/tickers': {
        get: {
          summary: 'Tickers of an exchange, sorted (byte order)',
          description:
            'Only tickers matching the key’s ticker_prefixes (whatever prefix says) and having data inside the caller’s window are listed.',
          parameters: [
            { $ref: '#/components/parameters/exchange' },
            {
              name: 'prefix',
              in: 'query',
              required: false,
              description: 'Case-insensitive prefix filter.',
              schema: { type: 'string', maxLength: 64 },
            },
          ],
          responses: {
            '200': {
              description: 'Ticker list',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/TickerList' } } },
            },
            ...common,
          },
        },
      },
      '/api/{exchange}/snapshots/{ticker}': {
        get: {
          summary: 'Full-book snapshot rows',
          parameters: rowParams,
          responses: {
            '200': {
              description: 'Snapshot rows (count follows rows, so the body streams)',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/SnapshotResponse' } } },
            },
            ...common,
          },
        },
      },
      '/api/{exchange}/deltas/{ticker}': {
        get: {
          summary: 'Incremental delta rows; equal ts are ordered by sequence',
          parameters: rowParams,
          responses: {
            '200': {
              description: 'Delta rows (count follows rows, so the body streams)',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/DeltaResponse' } } },
            },
            ...common,
          },
        },
      },
    },
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        basic: {
          type: 'http',
          scheme: 'basic',
          description: 'The key as the user name, password empty or ignored; x-api-key wins when both are sent',
        },
      },
      parameters: {
        exchange: {
          name: 'exchange',
          in: 'path',
          required: true,
          schema: { type: 'string', enum: [...EXCHANGE_KEYS] },
        },
        ticker: {
          name: 'ticker',
          in: 'path',
          required: true,
          description: 'Matched exactly, else case-insensitively when exactly one stored ticker matches.',
          schema: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,64}$' },
        },
      },
      schemas: {
        Error: {
          type: 'object',
          properties: { error: { type: 'string', enum: [...ERROR_CODES] }, message: { type: 'string' } },
          required: ['error', 'message'],
          additionalProperties: false,
        },
        Timestamp: {
          type: 'string',
          description: 'UTC RFC 3339 with exactly three fractional digits',
          examples: ['2026-03-26T14:00:01.193Z'],
        },
        Decimal: {
          type: 'string',
          pattern: '^-?[0-9]+(\\.[0-9]*[1-9])?$',
          description: 'Exact decimal; trailing fractional zeros are not written',
          examples: ['0.48', '150', '-20.5'],
        },
        TickerList: {
          type: 'object',
          properties: {
            exchange: { type: 'string' },
            count: { type: 'integer' },
            tickers: { type: 'array', items: { type: 'string' } },
          },
          required: ['exchange', 'count', 'tickers'],
        },
        SnapshotRow: {
          type: 'object',
          properties: {
            ts: { $ref: '#/components/schemas/Timestamp' },
            side: { enum: ['bid', 'ask'] },
            price: { $ref: '#/components/schemas/Decimal' },
            quantity: { $ref: '#/components/schemas/Decimal' },
          },
          required: ['ts', 'side', 'price', 'quantity'],
        },
        DeltaRow: {
          type: 'object',
          properties: {
            ts: { $ref: '#/components/schemas/Timestamp' },
            sequence: { type: 'integer' },
            side: { enum: ['bid', 'ask'] },
            price: { $ref: '#/components/schemas/Decimal' },
            quantity_delta: { $ref: '#/components/schemas/Decimal' },
          },
          required: ['ts', 'sequence', 'side', 'price', 'quantity_delta'],
        },
        SnapshotResponse: {
          type: 'object',
          properties: {
            exchange: { type: 'string' },
            ticker: { type: 'string' },
            rows: { type: 'array', items: { $ref: '#/components/schemas/SnapshotRow' } },
            count: { type: 'integer' },
          },
          required: ['exchange', 'ticker', 'rows', 'count'],
        },
        DeltaResponse: {
          type: 'object',
          properties: {
            exchange: { type: 'string' },
            ticker: { type: 'string' },
            rows: { type: 'array', items: { $ref: '#/components/schemas/DeltaRow' } },
            count: { type: 'integer' },
          },
          required: ['exchange', 'ticker', 'rows', 'count'],
        },
      },
    },
  };
}
