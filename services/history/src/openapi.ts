/** The OpenAPI 3.1 description of the history service, served at `/openapi.json`. */
import { EXCHANGE_KEYS } from '@depthgate/auth';
import { ERROR_CODES } from '@depthgate/service-kit';

export function openApiDocument(options: {
  defaultLimit: number;
  maxLimit: number;
  queryTimeoutMs: number;
  maxBookDepth: number;
}) {
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
      description: `Maximum rows, applied after sorting by ts so the earliest rows are kept. JSON: default ${options.defaultLimit}, maximum ${options.maxLimit} (a larger value is answered 400 invalid_limit). NDJSON and CSV: no default (the whole range) and no maximum. Snapshots are rounded up to whole books. An answer the limit cut carries next_cursor (and, when its body is at most 1 MiB, a Link header).`,
      schema: { type: 'integer', minimum: 1, default: options.defaultLimit },
    },
    {
      name: 'cursor',
      in: 'query',
      required: false,
      description:
        'Continue a walk: the next_cursor of the previous page (or the cursor of its Link header), as it came. It carries the range, so start_ts and end_ts may not be given with it; it is bound to this exchange, ticker, endpoint and caller (else 400 invalid_cursor). The next page begins exactly after the previous one: no row twice, none skipped, whole books for snapshots.',
      schema: { type: 'string' },
    },
    {
      name: 'format',
      in: 'query',
      required: false,
      description:
        'json (the default), ndjson or csv; wins over Accept (application/json, application/x-ndjson or application/ndjson, text/csv). NDJSON and CSV are bulk streams of the whole range, with a last line that says how they ended.',
      schema: { enum: ['json', 'ndjson', 'csv'] },
    },
    {
      name: 'fields',
      in: 'query',
      required: false,
      description:
        'Fields to add to every row, comma-separated: received_ts (when the recorder received the row, UTC RFC 3339; rows recorded before receive times were kept have their ts).',
      schema: { type: 'string', enum: ['received_ts'] },
    },
    {
      name: 'include',
      in: 'query',
      required: false,
      description:
        'gaps: the recorded gaps of the range among the rows (NDJSON: {"type":"gap",…} lines, CSV: #gap lines, in time order; JSON: a gaps array).',
      schema: { type: 'string', enum: ['gaps'] },
    },
  ];
  const streams = (row: string) => ({
    'application/x-ndjson': {
      schema: {
        description: `One ${row} per line, gap markers (with include=gaps) among them, and a last line {"type":"end","count":N,"next_cursor":null|string}.`,
        oneOf: [
          { $ref: `#/components/schemas/${row}` },
          { $ref: '#/components/schemas/GapLine' },
          { $ref: '#/components/schemas/EndLine' },
        ],
      },
    },
    'text/csv': {
      schema: {
        type: 'string',
        description:
          'A header line, one row per line in the header’s columns, gap markers #gap,from_ts,to_ts,reason,detected_at (with include=gaps) among them, and a last line #end,count,next_cursor (empty when complete).',
      },
    },
  });
  const common = {
    '400': error(
      'invalid_timestamp (start_ts/end_ts/at not RFC 3339, start_ts after end_ts, at before the caller’s window), invalid_limit, invalid_cursor (malformed, altered, another format, or issued for another exchange, ticker, endpoint or caller), invalid_format, invalid_fields, invalid_include or invalid_depth',
    ),
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
        'Recorded order-book history per exchange and ticker: ticker lists, full-book snapshots and incremental deltas (pages ' +
        'with cursors, or bulk NDJSON/CSV streams), coverage and gaps, and the book rebuilt at any moment. ' +
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
      '/explorer': {
        get: {
          summary:
            'The Explorer: a page to browse what was recorded (coverage and gaps, the book at any moment, changes)',
          description:
            'An HTML page built at build time; its assets live under /explorer/assets/ with content-hashed names (cached for a year, immutable). Served with a strict Content-Security-Policy (same origin only, no inline script). It calls this API from the browser as the caller: anonymously, or with a key typed into the page (kept in memory, sent as x-api-key). /explorer/ redirects here. docs/explorer.md.',
          security: [],
          responses: {
            '200': { description: 'The page', content: { 'text/html': { schema: { type: 'string' } } } },
            '304': { description: 'Not modified (If-None-Match matched the ETag)' },
          },
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
              headers: { Link: { $ref: '#/components/headers/Link' } },
              content: {
                'application/json': { schema: { $ref: '#/components/schemas/SnapshotResponse' } },
                ...streams('SnapshotRow'),
              },
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
              headers: { Link: { $ref: '#/components/headers/Link' } },
              content: {
                'application/json': { schema: { $ref: '#/components/schemas/DeltaResponse' } },
                ...streams('DeltaRow'),
              },
            },
            ...common,
          },
        },
      },
      '/api/{exchange}/coverage/{ticker}': {
        get: {
          summary:
            'What was recorded of a ticker inside the caller’s window: rows, first and last ts per kind, and every gap',
          description:
            'No rows and no gap: nothing happened while it was being recorded; a gap: it was not recorded then. start_ts and end_ts narrow the range (clamped to the caller’s window as for rows).',
          parameters: [rowParams[0], rowParams[1], rowParams[2], rowParams[3]],
          responses: {
            '200': {
              description: 'Coverage',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Coverage' } } },
            },
            ...common,
          },
        },
      },
      '/api/{exchange}/book/{ticker}': {
        get: {
          summary: 'The order book at a moment, rebuilt by rule 7 (snapshot + deltas)',
          description:
            'The newest snapshot at or before at (inside the caller’s window) plus every delta from its ts to at, in (ts, sequence) order. Inside a recorded gap (from_ts ≤ at < to_ts) the answer says so instead of giving a book.',
          parameters: [
            rowParams[0],
            rowParams[1],
            {
              name: 'at',
              in: 'query',
              required: false,
              description:
                'RFC 3339 moment (sub-milliseconds round down); default: now (the newest state). Before the caller’s window: 400 invalid_timestamp naming the window’s start.',
              schema: { type: 'string', format: 'date-time' },
            },
            {
              name: 'depth',
              in: 'query',
              required: false,
              description: `Levels per side, best first; default: every level. 1 to ${options.maxBookDepth} (else 400 invalid_depth).`,
              schema: { type: 'integer', minimum: 1, maximum: options.maxBookDepth },
            },
          ],
          responses: {
            '200': {
              description: 'The book, or why there is none',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Book' } } },
            },
            ...common,
          },
        },
      },
    },
    components: {
      headers: {
        Link: {
          description:
            'On a page the limit cut whose body is at most 1 MiB: `</api/…?cursor=…&limit=…>; rel="next"` (RFC 8288), the next page with the same limit, format, fields and include.',
          schema: { type: 'string' },
        },
      },
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
            received_ts: { $ref: '#/components/schemas/Timestamp', description: 'With fields=received_ts only' },
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
            received_ts: { $ref: '#/components/schemas/Timestamp', description: 'With fields=received_ts only' },
          },
          required: ['ts', 'sequence', 'side', 'price', 'quantity_delta'],
        },
        SnapshotResponse: {
          type: 'object',
          description:
            'next_cursor (and gaps, with include=gaps) only when a parameter added after the spec is given: cursor, format, fields or include.',
          properties: {
            exchange: { type: 'string' },
            ticker: { type: 'string' },
            rows: { type: 'array', items: { $ref: '#/components/schemas/SnapshotRow' } },
            count: { type: 'integer' },
            gaps: { type: 'array', items: { $ref: '#/components/schemas/Gap' } },
            next_cursor: { type: ['string', 'null'] },
          },
          required: ['exchange', 'ticker', 'rows', 'count'],
        },
        DeltaResponse: {
          type: 'object',
          description:
            'next_cursor (and gaps, with include=gaps) only when a parameter added after the spec is given: cursor, format, fields or include.',
          properties: {
            exchange: { type: 'string' },
            ticker: { type: 'string' },
            rows: { type: 'array', items: { $ref: '#/components/schemas/DeltaRow' } },
            count: { type: 'integer' },
            gaps: { type: 'array', items: { $ref: '#/components/schemas/Gap' } },
            next_cursor: { type: ['string', 'null'] },
          },
          required: ['exchange', 'ticker', 'rows', 'count'],
        },
        Gap: {
          type: 'object',
          description:
            'A stretch that was not recorded: from_ts is the last moment known complete, to_ts the first again.',
          properties: {
            from_ts: { $ref: '#/components/schemas/Timestamp' },
            to_ts: { $ref: '#/components/schemas/Timestamp' },
            reason: { type: 'string', examples: ['disconnect', 'stall', 'sequence_gap', 'recorder_start', 'seed_end'] },
            detected_at: { $ref: '#/components/schemas/Timestamp' },
          },
          required: ['from_ts', 'to_ts', 'reason', 'detected_at'],
        },
        GapLine: {
          allOf: [
            { type: 'object', properties: { type: { const: 'gap' } }, required: ['type'] },
            { $ref: '#/components/schemas/Gap' },
          ],
        },
        EndLine: {
          type: 'object',
          properties: {
            type: { const: 'end' },
            count: { type: 'integer', description: 'Rows in the stream (gap lines not counted)' },
            next_cursor: {
              type: ['string', 'null'],
              description: 'Where the rest begins, when the stream stopped early',
            },
          },
          required: ['type', 'count', 'next_cursor'],
        },
        KindCoverage: {
          type: 'object',
          properties: {
            rows: { type: 'integer' },
            books: { type: 'integer', description: 'Snapshots only: distinct books' },
            first_ts: { oneOf: [{ $ref: '#/components/schemas/Timestamp' }, { type: 'null' }] },
            last_ts: { oneOf: [{ $ref: '#/components/schemas/Timestamp' }, { type: 'null' }] },
          },
          required: ['rows', 'first_ts', 'last_ts'],
        },
        Coverage: {
          type: 'object',
          properties: {
            exchange: { type: 'string' },
            ticker: { type: 'string' },
            start_ts: { $ref: '#/components/schemas/Timestamp' },
            end_ts: { oneOf: [{ $ref: '#/components/schemas/Timestamp' }, { type: 'null' }] },
            snapshots: { $ref: '#/components/schemas/KindCoverage' },
            deltas: { $ref: '#/components/schemas/KindCoverage' },
            gaps: { type: 'array', items: { $ref: '#/components/schemas/Gap' } },
            window: {
              type: 'object',
              description:
                'The caller’s window for this ticker and the rule that sets it, so that older data being absent can be explained: anonymous (the last day), max_data_age_days (the key’s limit), full_history_prefix (the key’s full_history_prefixes match the ticker), full_history (a key without a limit). Never before 2026-03-07.',
              properties: {
                start_ts: { $ref: '#/components/schemas/Timestamp' },
                rule: { enum: ['anonymous', 'max_data_age_days', 'full_history_prefix', 'full_history'] },
                days: {
                  oneOf: [{ type: 'integer' }, { type: 'null' }],
                  description: 'Days the rule allows; null: full history',
                },
              },
              required: ['start_ts', 'rule', 'days'],
            },
          },
          required: ['exchange', 'ticker', 'start_ts', 'end_ts', 'snapshots', 'deltas', 'gaps', 'window'],
        },
        Level: {
          type: 'object',
          properties: {
            price: { $ref: '#/components/schemas/Decimal' },
            quantity: { $ref: '#/components/schemas/Decimal' },
          },
          required: ['price', 'quantity'],
        },
        Book: {
          type: 'object',
          properties: {
            exchange: { type: 'string' },
            ticker: { type: 'string' },
            at: { $ref: '#/components/schemas/Timestamp' },
            status: {
              enum: ['ok', 'in_gap', 'no_data'],
              description:
                'ok: the book; in_gap: at falls inside a recorded gap (gap), there is no book; no_data: nothing to start from in the caller’s window (no snapshot at or before at)',
            },
            snapshot_ts: {
              oneOf: [{ $ref: '#/components/schemas/Timestamp' }, { type: 'null' }],
              description: 'The snapshot the book started from; null when it restarted empty at the end of base_gap',
            },
            last_delta: {
              oneOf: [
                {
                  type: 'object',
                  properties: { ts: { $ref: '#/components/schemas/Timestamp' }, sequence: { type: 'integer' } },
                  required: ['ts', 'sequence'],
                },
                { type: 'null' },
              ],
            },
            gap: { oneOf: [{ $ref: '#/components/schemas/Gap' }, { type: 'null' }] },
            base_gap: {
              oneOf: [{ $ref: '#/components/schemas/Gap' }, { type: 'null' }],
              description:
                'A gap closed by an empty book (no snapshot at its to_ts): the book restarted empty at its end',
            },
            bids: {
              oneOf: [{ type: 'array', items: { $ref: '#/components/schemas/Level' } }, { type: 'null' }],
              description: 'Best (highest) first',
            },
            asks: {
              oneOf: [{ type: 'array', items: { $ref: '#/components/schemas/Level' } }, { type: 'null' }],
              description: 'Best (lowest) first',
            },
          },
          required: [
            'exchange',
            'ticker',
            'at',
            'status',
            'snapshot_ts',
            'last_delta',
            'gap',
            'base_gap',
            'bids',
            'asks',
          ],
        },
      },
    },
  };
}
