/**
 * The transport and both clients against small local HTTP servers written for each case (real sockets, so cut
 * streams and stalls are real): retries and their bound, error answers, timeouts, keys, NDJSON and JSON paging.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BookError, DataError, HttpError, TransportError } from './errors';
import { GatewayClient } from './gateway-client';
import { HistoryClient } from './history-client';
import type { DeltaRow } from './rows';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;
let server: http.Server;
let base: string;
let handler: Handler;
const seen: { url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  seen.length = 0;
});

const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': 'srv-1', ...headers });
  res.end(JSON.stringify(body));
};
const T0 = Date.UTC(2026, 2, 26, 14);
const iso = (ms: number) => new Date(ms).toISOString();
const fast = { retry: { baseDelayMs: 1 } };

describe('transport', () => {
  it('retries 429 and 503 after Retry-After, with a new request id per attempt, and the key in X-API-Key', async () => {
    let n = 0;
    handler = (_req, res) => {
      n++;
      if (n === 1) return json(res, 429, { error: 'rate_limited', message: 'slow down' }, { 'Retry-After': '0' });
      if (n === 2) return json(res, 503, { error: 'service_unavailable', message: 'x' }, { 'Retry-After': '0' });
      json(res, 200, { exchange: 'venue_b', count: 1, tickers: ['KXA'] });
    };
    const client = new HistoryClient({ baseUrl: base, apiKey: 'dg_key', ...fast });
    expect(await client.tickers('venue_b', { prefix: 'kx' })).toEqual(['KXA']);
    expect(seen.map((s) => s.url)).toEqual(Array(3).fill('/api/venue_b/tickers?prefix=kx'));
    expect(seen.every((s) => s.headers['x-api-key'] === 'dg_key')).toBe(true);
    expect(new Set(seen.map((s) => s.headers['x-request-id'])).size).toBe(3);
  });

  it('does not wait for a Retry-After beyond its bound: the error says how long', async () => {
    handler = (_req, res) =>
      json(res, 503, { error: 'upstream_unavailable', message: 'circuit open' }, { 'Retry-After': '120' });
    const client = new GatewayClient({ baseUrl: base, retry: { maxDelayMs: 1000 } });
    const err = await client.get('kalshi', 'markets').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(HttpError);
    expect(err).toMatchObject({
      code: 'http_error',
      status: 503,
      error: 'upstream_unavailable',
      retryAfterMs: 120_000,
      requestId: 'srv-1',
    });
    expect(seen).toHaveLength(1);
  });

  it('gives up after the last retry with the last answer’s error', async () => {
    handler = (_req, res) =>
      json(res, 429, { error: 'rate_limited', message: 'Too many requests' }, { 'Retry-After': '0' });
    const client = new HistoryClient({ baseUrl: base, retry: { retries: 2 } });
    await expect(client.tickers('venue_b')).rejects.toMatchObject({
      code: 'http_error',
      status: 429,
      error: 'rate_limited',
    });
    expect(seen).toHaveLength(3);
  });

  it('a non-JSON error body is its own code, with the status, the body and the request id', async () => {
    handler = (_req, res) => {
      res.writeHead(502, { 'Content-Type': 'text/html', 'X-Request-Id': 'proxy-9' });
      res.end('<html><body>Bad Gateway</body></html>');
    };
    const err = (await new HistoryClient({ baseUrl: base }).tickers('venue_b').catch((e: unknown) => e)) as HttpError;
    expect(err).toBeInstanceOf(HttpError);
    expect(err.code).toBe('non_json_error_body');
    expect(err.status).toBe(502);
    expect(err.requestId).toBe('proxy-9');
    expect(err.message).toContain('not JSON (text/html)');
    expect(err.body).toContain('Bad Gateway');
    expect(seen).toHaveLength(1);
  });

  it('a request without an answer times out; a refused connection is retried, then network_error', async () => {
    handler = () => undefined; // never answers
    const slow = new HistoryClient({ baseUrl: base, timeoutMs: 100 });
    const err = (await slow.tickers('venue_b').catch((e: unknown) => e)) as TransportError;
    expect(err).toBeInstanceOf(TransportError);
    expect(err.code).toBe('timeout');
    expect(err.requestId).toBe(seen[0]?.headers['x-request-id']);
    const refused = new HistoryClient({ baseUrl: 'http://127.0.0.1:1', retry: { retries: 1, baseDelayMs: 1 } });
    await expect(refused.tickers('venue_b')).rejects.toMatchObject({ code: 'network_error' });
    const aborted = new AbortController();
    aborted.abort();
    await expect(slow.tickers('venue_b', { signal: aborted.signal })).rejects.toMatchObject({ code: 'aborted' });
  });

  it('sends the key as HTTP Basic when asked; refuses a URL with credentials', async () => {
    handler = (_req, res) => json(res, 200, { exchange: 'venue_b', count: 0, tickers: [] });
    await new HistoryClient({ baseUrl: base, apiKey: 'dg_abc', keyIn: 'basic' }).tickers('venue_b');
    expect(seen[0]?.headers.authorization).toBe(`Basic ${Buffer.from('dg_abc:').toString('base64')}`);
    expect(seen[0]?.headers['x-api-key']).toBeUndefined();
    expect(() => new HistoryClient({ baseUrl: 'http://dg_abc@127.0.0.1/' })).toThrow(/credentials/);
  });
});

describe('GatewayClient', () => {
  it('GETs /api/v1/{platform}/{resource} with the query, and read-only POSTs with a JSON body', async () => {
    handler = (req, res, body) =>
      json(res, 200, { method: req.method, body: body ? JSON.parse(body) : null }, { 'X-Cache': 'MISS' });
    const gw = new GatewayClient({ baseUrl: `${base}/`, apiKey: 'dg_k' });
    const got = await gw.get<{ method: string }>('venue-b', 'markets/KX A/orderbook', {
      depth: 5,
      tickers: ['A', 'B'],
      x: undefined,
    });
    expect(seen[0]?.url).toBe('/api/v1/venue-b/markets/KX%20A/orderbook?depth=5&tickers=A&tickers=B');
    expect(got).toMatchObject({ status: 200, data: { method: 'GET' }, cache: 'MISS', requestId: 'srv-1' });
    const posted = await gw.post('venue-a-clob', 'books', [{ token_id: '1' }]);
    expect(seen[1]?.url).toBe('/api/v1/venue-a-clob/books');
    expect(seen[1]?.headers['content-type']).toBe('application/json');
    expect(posted.data).toEqual({ method: 'POST', body: [{ token_id: '1' }] });
    await expect(gw.get('venue-b', '../admin')).rejects.toMatchObject({ code: 'invalid_argument' });
  });

  it('passes an upstream’s own JSON error through as http_error with its body', async () => {
    handler = (_req, res) => json(res, 404, { code: 'not_found', details: 'no market' });
    const err = (await new GatewayClient({ baseUrl: base })
      .get('kalshi', 'markets/X')
      .catch((e: unknown) => e)) as HttpError;
    expect(err.code).toBe('http_error');
    expect(err.error).toBeUndefined();
    expect(err.json).toEqual({ code: 'not_found', details: 'no market' });
  });
});

/** A history service over rows held here: the spec's JSON paging, or NDJSON with cursors. */
function deltaRows(n: number, perTs: number): DeltaRow[] {
  return Array.from({ length: n }, (_, i) => ({
    ts: iso(T0 + Math.floor(i / perTs) * 10),
    sequence: 100 + i,
    side: 'bid' as const,
    price: '0.4',
    quantity_delta: i % 2 ? '-1' : '2',
  }));
}

function specDeltas(rows: DeltaRow[]): Handler {
  return (req, res) => {
    const q = new URL(req.url ?? '', 'http://x').searchParams;
    const start = q.has('start_ts') ? Date.parse(q.get('start_ts') as string) : -Infinity;
    const limit = Number(q.get('limit') ?? 1000);
    const page = rows.filter((r) => Date.parse(r.ts) >= start).slice(0, limit);
    json(res, 200, { exchange: 'venue_b', ticker: 'T', rows: page, count: page.length });
  };
}

describe('HistoryClient: rows', () => {
  it('pages the spec’s JSON endpoint by start_ts, skipping sequences already given, through equal-ts runs', async () => {
    const rows = deltaRows(95, 7); // 7 rows per ts; pages of 10 cut runs
    handler = specDeltas(rows);
    const client = new HistoryClient({ baseUrl: base });
    const got: DeltaRow[] = [];
    for await (const r of client.deltas('venue_b', 'T', { pageSize: 10 })) got.push(r);
    expect(got).toEqual(rows);
    expect(seen.length).toBeGreaterThan(10);
    expect(seen[0]?.url).toContain('format=ndjson');
  });

  it('asks for more at once when one ts holds more deltas than a page', async () => {
    const rows = deltaRows(25, 25);
    handler = specDeltas(rows);
    const got: DeltaRow[] = [];
    for await (const r of new HistoryClient({ baseUrl: base }).deltas('venue_b', 'T', { pageSize: 10 })) got.push(r);
    expect(got).toEqual(rows);
  });

  it('reads NDJSON and follows next_cursor until the end line says null', async () => {
    const rows = deltaRows(30, 3);
    handler = (req, res) => {
      const q = new URL(req.url ?? '', 'http://x').searchParams;
      const from = Number(q.get('cursor') ?? 0);
      const page = rows.slice(from, from + 12);
      const next = from + 12 < rows.length ? String(from + 12) : null;
      res.writeHead(200, { 'Content-Type': 'application/x-ndjson; charset=utf-8' });
      const gap =
        from === 12
          ? `{"type":"gap","from_ts":"${rows[13]?.ts}","to_ts":"${rows[14]?.ts}","reason":"reconnect","detected_at":"${rows[14]?.ts}"}\n`
          : '';
      res.end(
        page.map((r) => JSON.stringify(r)).join('\n') +
          '\n' +
          gap +
          JSON.stringify({ type: 'end', count: page.length, next_cursor: next }) +
          '\n',
      );
    };
    const got = [];
    for await (const r of new HistoryClient({ baseUrl: base }).deltas('venue_b', 'T', { gaps: true })) got.push(r);
    expect(got.filter((r) => !('type' in r))).toEqual(rows);
    expect(got.filter((r) => 'type' in r)).toHaveLength(1);
    expect(seen.map((s) => new URL(s.url, 'http://x').searchParams.get('cursor'))).toEqual([null, '12', '24']);
  });

  const ndjsonCase =
    (body: string, cut = false): Handler =>
    (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
      if (cut) {
        res.write(body);
        setTimeout(() => res.destroy(), 20);
      } else res.end(body);
    };
  const line = (r: DeltaRow) => JSON.stringify(r) + '\n';
  const rows3 = deltaRows(3, 1);

  it.each([
    ['a connection cut mid-stream', ndjsonCase(line(rows3[0] as DeltaRow) + '{"ts":"2026-03', true), 'stream_cut'],
    ['a stream that ends without its end line', ndjsonCase(rows3.map(line).join('')), 'stream_cut'],
    ['a stream that ends inside a line', ndjsonCase(line(rows3[0] as DeltaRow) + '{"ts":"2026'), 'stream_cut'],
    [
      'an end line that counts other rows',
      ndjsonCase(rows3.map(line).join('') + '{"type":"end","count":4,"next_cursor":null}\n'),
      'stream_cut',
    ],
    [
      'a malformed row',
      ndjsonCase(
        line(rows3[0] as DeltaRow) +
          '{"ts":"2026-03-26T14:00:00.000Z","sequence":1,"side":"bid","price":"x","quantity_delta":"1"}\n',
      ),
      'malformed_row',
    ],
    [
      'a body of another type',
      (_req: http.IncomingMessage, res: http.ServerResponse) => {
        res.writeHead(200, { 'Content-Type': 'text/html' });
        res.end('<html>');
      },
      'malformed_body',
    ],
    [
      'a JSON page whose count disagrees',
      (_req: http.IncomingMessage, res: http.ServerResponse) =>
        json(res, 200, { exchange: 'venue_b', ticker: 'T', rows: rows3, count: 4 }),
      'malformed_body',
    ],
  ] as [string, Handler, string][])('%s is a typed error, never a short series or a book', async (_what, h, code) => {
    handler = h;
    const client = new HistoryClient({ baseUrl: base });
    const err = await (async () => {
      for await (const _r of client.deltas('venue_b', 'T')) void _r;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataError);
    expect((err as DataError).code).toBe(code);
  });

  it('rebuild fails on a cut delta stream instead of returning a book', async () => {
    handler = (req, res) => {
      const path = new URL(req.url ?? '', 'http://x').pathname;
      if (path.includes('/coverage/')) return json(res, 404, { error: 'not_found', message: 'Not found' });
      res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
      if (path.includes('/snapshots/')) {
        return res.end(
          `{"ts":"${iso(T0)}","side":"bid","price":"0.4","quantity":"5"}\n{"type":"end","count":1,"next_cursor":null}\n`,
        );
      }
      res.write(line(rows3[0] as DeltaRow));
      setTimeout(() => res.destroy(), 20);
    };
    const err = await new HistoryClient({ baseUrl: base }).rebuild('venue_b', 'T', T0 + 100).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataError);
    expect((err as DataError).code).toBe('stream_cut');
    handler = (req, res) =>
      req.url?.includes('/coverage/')
        ? json(res, 200, { exchange: 'venue_b', ticker: 'T', gaps: [] })
        : json(res, 200, { exchange: 'venue_b', ticker: 'T', rows: [], count: 0 });
    const none = await new HistoryClient({ baseUrl: base })
      .rebuild('venue_b', 'T', T0, { lookbackMs: 3_600_000 })
      .catch((e: unknown) => e);
    expect(none).toBeInstanceOf(BookError);
    expect((none as BookError).code).toBe('no_snapshot');
  });
});
