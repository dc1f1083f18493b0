/**
 * The transport and both clients against small local HTTP servers written for each case (real sockets, so cut
 * streams and stalls are real): retries and their bound, error answers, timeouts, keys, NDJSON and JSON paging.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { BookError, DataError, HttpError, TransportError } from './errors';
import { GatewayClient } from './gateway-client';
import { parseRetryAfter } from './http';
import { HistoryClient } from './history-client';
import { OrderBook } from './order-book';
import type { DeltaRow, Gap, SnapshotRow } from './rows';

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

  it('reads Retry-After as delta-seconds or an HTTP date, and nothing else (`1.5` and `-1` are no dates)', () => {
    const now = Date.UTC(2026, 10, 28, 12);
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter('Sat, 28 Nov 2026 12:00:03 GMT', now)).toBe(3000);
    for (const bad of ['1.5', '-1', '', 'soon', null])
      expect([bad, parseRetryAfter(bad, now)]).toEqual([bad, undefined]);
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
      code: 'upstream_unavailable',
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
      code: 'rate_limited',
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

  it('follows a redirect within the service’s origin with the key; to another origin none is followed, the key never sent there', async () => {
    // Another origin: the same host on another port, recording what reaches it.
    const reached: http.IncomingHttpHeaders[] = [];
    const other = http.createServer((req, res) => {
      reached.push(req.headers);
      json(res, 200, { exchange: 'venue_b', count: 0, tickers: [] });
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const elsewhere = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    try {
      handler = (req, res) => {
        const path = req.url ?? '';
        const to = path.startsWith('/loop')
          ? '/loop'
          : path.startsWith('/old/')
            ? path.slice(4)
            : path.startsWith('/away/')
              ? elsewhere + path.slice(5)
              : undefined;
        if (to === undefined)
          return json(res, 200, { method: req.method, exchange: 'venue_b', count: 1, tickers: ['KXA'] });
        res.writeHead(path.includes('see-other') ? 303 : 307, { Location: to });
        res.end('moved');
      };
      for (const keyIn of ['header', 'basic'] as const) {
        // Within the origin: followed, the key sent again.
        seen.length = 0;
        const near = new HistoryClient({ baseUrl: `${base}/old`, apiKey: 'dg_secret', keyIn });
        expect(await near.tickers('venue_b')).toEqual(['KXA']);
        expect(seen.map((s) => s.url)).toEqual(['/old/api/venue_b/tickers', '/api/venue_b/tickers']);
        expect(seen[1]?.headers[keyIn === 'header' ? 'x-api-key' : 'authorization']).toBeDefined();
        // To another origin: a TransportError `redirect`, and nothing reaches it.
        const far = new HistoryClient({ baseUrl: `${base}/away`, apiKey: 'dg_secret', keyIn });
        const err = (await far.tickers('venue_b').catch((e: unknown) => e)) as TransportError;
        expect(err).toBeInstanceOf(TransportError);
        expect(err.code).toBe('redirect');
        expect(err.message).toContain(elsewhere);
        const gw = new GatewayClient({ baseUrl: `${base}/away`, apiKey: 'dg_secret', keyIn });
        await expect(gw.post('venue-a-clob', 'books', [])).rejects.toMatchObject({ code: 'redirect' });
      }
      expect(reached).toEqual([]);
      // A 303 after a POST goes on as a GET without the body; a redirect loop ends after 5 hops.
      seen.length = 0;
      const gw = new GatewayClient({ baseUrl: `${base}/old`, apiKey: 'dg_secret' });
      expect((await gw.post('venue-a-clob', 'books', [], { see: 'see-other' })).data).toMatchObject({ method: 'GET' });
      expect(seen.map((s) => [s.headers['x-api-key'], s.headers['content-type'], s.body])).toEqual([
        ['dg_secret', 'application/json', '[]'],
        ['dg_secret', undefined, ''],
      ]);
      seen.length = 0;
      await expect(new HistoryClient({ baseUrl: `${base}/loop` }).tickers('venue_b')).rejects.toMatchObject({
        code: 'redirect',
      });
      expect(seen).toHaveLength(6);
    } finally {
      other.closeAllConnections();
      await new Promise((r) => other.close(r));
    }
  });

  it('a redirect a browser’s fetch hides (an opaque answer) is not followed', async () => {
    const opaque = (async () => ({
      type: 'opaqueredirect',
      status: 0,
      headers: new Headers(),
      body: null,
    })) as unknown as typeof fetch;
    await expect(new HistoryClient({ baseUrl: base, fetch: opaque }).tickers('venue_b')).rejects.toMatchObject({
      code: 'redirect',
    });
  });

  it('shows no key when a client is logged or serialised (util.inspect, JSON.stringify), and still sends it', async () => {
    handler = (_req, res) => json(res, 200, { exchange: 'venue_b', count: 0, tickers: [] });
    for (const keyIn of ['header', 'basic'] as const) {
      const options = { baseUrl: base, apiKey: 'dg_secret', keyIn, headers: { 'X-Custom': 'x' } };
      const history = new HistoryClient(options);
      for (const client of [history, new GatewayClient(options)]) {
        const shown = [inspect(client, { depth: Infinity, showHidden: true }), JSON.stringify(client)];
        expect(shown[0]).toContain(base); // what is shown is the client
        for (const text of shown) {
          expect(text).not.toContain('dg_secret');
          expect(text).not.toContain(Buffer.from('dg_secret:').toString('base64'));
        }
      }
      await history.tickers('venue_b');
      expect(seen.at(-1)?.headers[keyIn === 'header' ? 'x-api-key' : 'authorization']).toBe(
        keyIn === 'header' ? 'dg_secret' : `Basic ${Buffer.from('dg_secret:').toString('base64')}`,
      );
    }
  });

  it('calls fetch as a plain function, as a browser’s fetch must be called (else "Illegal invocation")', async () => {
    handler = (_req, res) => json(res, 200, { exchange: 'venue_b', count: 0, tickers: [] });
    const real = globalThis.fetch;
    // A browser's window.fetch refuses any `this` but the window itself or undefined.
    const strict = function (this: unknown, input: Parameters<typeof fetch>[0], init?: RequestInit) {
      if (this !== undefined && this !== globalThis)
        throw new TypeError("Failed to execute 'fetch': Illegal invocation");
      return real(input, init);
    } as typeof fetch;
    globalThis.fetch = strict;
    try {
      expect(await new HistoryClient({ baseUrl: base }).tickers('venue_b')).toEqual([]);
      expect(await new HistoryClient({ baseUrl: base, fetch: strict }).tickers('venue_b')).toEqual([]);
    } finally {
      globalThis.fetch = real;
    }
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
    // A runtime without URLSearchParams.size (Node before 18.16, Safari before 17) sends the query too.
    const size = Object.getOwnPropertyDescriptor(URLSearchParams.prototype, 'size');
    delete (URLSearchParams.prototype as { size?: number }).size;
    try {
      await gw.get('venue-b', 'markets', { limit: 2 });
    } finally {
      if (size) Object.defineProperty(URLSearchParams.prototype, 'size', size);
    }
    expect(seen.splice(1, 1)[0]?.url).toBe('/api/v1/venue-b/markets?limit=2');
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

const coverage = (gaps: unknown[]) => ({
  exchange: 'venue_b',
  ticker: 'T',
  start_ts: iso(T0),
  end_ts: null,
  snapshots: { rows: 0, books: 0, first_ts: null, last_ts: null },
  deltas: { rows: 0, first_ts: null, last_ts: null },
  gaps,
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

/** The spec's JSON pages (no streams, no cursors) of `defaultLimit` rows unless asked; `served` gets each page. */
function specDeltas(rows: DeltaRow[], { defaultLimit = 1000, served = [] as DeltaRow[][] } = {}): Handler {
  return (req, res) => {
    const q = new URL(req.url ?? '', 'http://x').searchParams;
    const start = q.has('start_ts') ? Date.parse(q.get('start_ts') as string) : -Infinity;
    const limit = Number(q.get('limit') ?? defaultLimit);
    const page = rows.filter((r) => Date.parse(r.ts) >= start).slice(0, limit);
    served.push(page);
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
    expect(seen).toHaveLength(10); // each a page of 10 rows not given before (and the rows of its start_ts again)
    expect(seen[0]?.url).toContain('format=ndjson');
  });

  it('refuses an empty ticker before sending anything, as the Python client', async () => {
    const client = new HistoryClient({ baseUrl: base });
    const refused = { name: 'InvalidArgumentError', message: 'not a ticker: ""' };
    await expect(client.deltaPage('venue_b', '')).rejects.toMatchObject(refused);
    await expect(client.coverage('venue_b', '')).rejects.toMatchObject(refused);
    await expect(client.book('venue_b', '')).rejects.toMatchObject(refused);
    await expect(client.snapshots('venue_b', '').next()).rejects.toMatchObject(refused);
    await expect(client.rebuild('venue_b', '', '2026-03-26T14:00:00Z')).rejects.toMatchObject(refused);
    expect(seen).toHaveLength(0);
  });

  it('refuses a lookbackMs that is not a positive integer before sending anything, as the Python client', async () => {
    const client = new HistoryClient({ baseUrl: base });
    const at = '2026-03-26T14:00:00Z';
    for (const lookbackMs of [0, -60_000, NaN, Infinity]) {
      await expect(client.rebuild('venue_b', 'T', at, { lookbackMs })).rejects.toMatchObject({
        name: 'InvalidArgumentError',
        message: 'lookbackMs must be a positive integer',
      });
      await expect(client.replay('venue_b', 'T', { from: at, lookbackMs }).next()).rejects.toMatchObject({
        name: 'InvalidArgumentError',
      });
    }
    expect(seen).toHaveLength(0);
  });

  it('refuses a page limit that is not a positive integer before sending anything, as the Python client', async () => {
    const client = new HistoryClient({ baseUrl: base });
    for (const limit of [0, -1, 1.5, NaN, Infinity]) {
      await expect(client.deltaPage('venue_b', 'T', { limit })).rejects.toMatchObject({
        name: 'InvalidArgumentError',
        code: 'invalid_argument',
      });
    }
    expect(seen).toHaveLength(0);
  });

  it('sends a sub-millisecond start rounded up and an end rounded down, as the service reads them', async () => {
    handler = (req, res) =>
      req.url?.includes('/coverage/')
        ? json(res, 200, coverage([]))
        : json(res, 200, { exchange: 'venue_b', ticker: 'T', rows: [], count: 0, next_cursor: null });
    const client = new HistoryClient({ baseUrl: base });
    const range = { start: '2026-03-26T14:00:00.0005Z', end: '2026-03-26T14:00:01.0009Z' };
    for await (const _r of client.deltas('venue_b', 'T', range)) void _r;
    await client.snapshotPage('venue_b', 'T', range);
    await client.coverage('venue_b', 'T', range);
    await client.book('venue_b', 'T', { at: range.end }).catch(() => undefined);
    const sent = seen.map((s) => new URL(s.url, 'http://x'));
    const ranges = sent.filter((u) => !u.pathname.includes('/book/')).map((u) => u.searchParams);
    expect(ranges.map((q) => [q.get('start_ts'), q.get('end_ts')])).toEqual(
      Array(ranges.length).fill(['2026-03-26T14:00:00.001Z', '2026-03-26T14:00:01.000Z']),
    );
    expect(ranges.length).toBeGreaterThanOrEqual(3);
    expect(sent.at(-1)?.searchParams.get('at')).toBe('2026-03-26T14:00:01.000Z');
  });

  it('a service without streams answers JSON of its default size: the client takes it and goes on in pages', async () => {
    const rows = deltaRows(50, 3);
    handler = specDeltas(rows, { defaultLimit: 7 });
    const got: DeltaRow[] = [];
    for await (const r of new HistoryClient({ baseUrl: base }).deltas('venue_b', 'T')) got.push(r);
    expect(got).toEqual(rows);
    expect(seen[0]?.url).not.toContain('limit=');
    // From the last ts of the first page: its one row there again, and a page of the default size.
    expect(new URL(seen[1]?.url ?? '', base).searchParams.get('start_ts')).toBe(rows[6]?.ts);
    expect(seen[1]?.url).toContain('limit=100001');
    expect(seen).toHaveLength(2);
  });

  it('a service without cursors is asked for each page once, reading again only the ts it starts at', async () => {
    const rows = deltaRows(60, 25); // runs longer than a page of 10, and than the service's own default of 7
    const served: DeltaRow[][] = [];
    handler = specDeltas(rows, { defaultLimit: 7, served });
    const client = new HistoryClient({ baseUrl: base });
    // Pages of a size given; and a stream asked for, answered by a JSON page of the service's default size.
    for (const options of [{ transport: 'pages' as const, pageSize: 10 }, {}]) {
      seen.length = 0;
      served.length = 0;
      const got: DeltaRow[] = [];
      for await (const r of client.deltas('venue_b', 'T', options)) got.push(r);
      expect(got).toEqual(rows);
      const given = new Set<number>();
      served.forEach((page, n) => {
        const again = page.filter((r) => given.has(r.sequence));
        // Paging by start_ts (inclusive, to the millisecond) reads again the rows at the ts it starts at, and nothing
        // else; and every request but the last brings rows not read before.
        const start = new URL(seen[n]?.url ?? '', base).searchParams.get('start_ts');
        expect({ options, n, elsewhere: again.filter((r) => r.ts !== start) }).toEqual({ options, n, elsewhere: [] });
        if (n < served.length - 1)
          expect({ options, n, fresh: page.length - again.length > 0 }).toMatchObject({ fresh: true });
        for (const r of page) given.add(r.sequence);
      });
    }
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
      'an end line whose count is not a whole number',
      ndjsonCase(rows3.map(line).join('') + '{"type":"end","count":2.5,"next_cursor":null}\n'),
      'malformed_row',
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
      const url = new URL(req.url ?? '', 'http://x');
      const path = url.pathname;
      if (path.includes('/coverage/')) return json(res, 404, { error: 'not_found', message: 'Not found' });
      res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
      // No later snapshot.
      if (url.searchParams.get('format') === 'digest') return res.end(digestStream([]));
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
        ? json(res, 200, coverage([]))
        : json(res, 200, { exchange: 'venue_b', ticker: 'T', rows: [], count: 0 });
    const none = await new HistoryClient({ baseUrl: base })
      .rebuild('venue_b', 'T', T0, { lookbackMs: 3_600_000 })
      .catch((e: unknown) => e);
    expect(none).toBeInstanceOf(BookError);
    expect((none as BookError).code).toBe('no_snapshot');
  });
});

/** The snapshots' digest lines as the service writes them (`format=digest`): one per book, in order, and the end. */
function digestStream(rows: SnapshotRow[]): string {
  const books = new Map<string, SnapshotRow[]>();
  for (const r of rows) books.set(r.ts, [...(books.get(r.ts) ?? []), r]);
  const lines = [...books].map(([ts, rows]) => {
    const book = OrderBook.fromSnapshot(rows, { checkCrossed: false });
    return `{"ts":"${ts}","levels":${book.depth()},"digest":"${book.digest()}"}\n`;
  });
  return `${lines.join('')}{"type":"end","count":${lines.length},"next_cursor":null}\n`;
}

/**
 * A history service over a recorded series held here (NDJSON streams, the snapshots' digests and coverage as the
 * service answers them; with `jsonOnly`, the spec's JSON pages whatever is asked for, as a service without streams;
 * with `digests: false`, `format=digest` refused as a service from before it refuses it), for rule 7 across
 * snapshots and gaps.
 */
function recordedService(
  series: { snapshots: SnapshotRow[]; deltas: DeltaRow[]; gaps: Gap[] },
  { jsonOnly = false, digests = true } = {},
): Handler {
  return (req, res) => {
    const url = new URL(req.url ?? '', 'http://x');
    const q = url.searchParams;
    if (!jsonOnly && q.get('format') === 'digest' && !digests) {
      return json(res, 400, { error: 'invalid_format', message: 'format must be json, ndjson, csv or parquet' });
    }
    const start = q.has('start_ts') ? Date.parse(q.get('start_ts') as string) : -Infinity;
    const end = q.has('end_ts') ? Date.parse(q.get('end_ts') as string) : Infinity;
    const inRange = (ts: string) => Date.parse(ts) >= start && Date.parse(ts) <= end;
    if (url.pathname.includes('/coverage/')) {
      return json(
        res,
        200,
        coverage(series.gaps.filter((g) => Date.parse(g.to_ts) >= start && Date.parse(g.from_ts) <= end)),
      );
    }
    const rows = (url.pathname.includes('/snapshots/') ? series.snapshots : series.deltas).filter((r) => inRange(r.ts));
    if (jsonOnly) {
      // Its limit cuts deltas exactly and snapshots after the whole book (the spec's pages; no cursors).
      const limit = Number(q.get('limit') ?? 1000);
      const last = rows[limit - 1];
      const page =
        url.pathname.includes('/snapshots/') && last ? rows.filter((r) => r.ts <= last.ts) : rows.slice(0, limit);
      return json(res, 200, { exchange: 'venue_b', ticker: 'T', rows: page, count: page.length });
    }
    res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
    if (q.get('format') === 'digest') return res.end(digestStream(rows as SnapshotRow[]));
    res.end(
      rows.map((r) => JSON.stringify(r) + '\n').join('') +
        JSON.stringify({ type: 'end', count: rows.length, next_cursor: null }) +
        '\n',
    );
  };
}

describe('HistoryClient: rule 7 across snapshots and gaps', () => {
  const s = (ts: number, side: 'bid' | 'ask', price: string, quantity: string): SnapshotRow => ({
    ts: iso(ts),
    side,
    price,
    quantity,
  });
  const d = (ts: number, sequence: number, side: 'bid' | 'ask', price: string, quantity_delta: string): DeltaRow => ({
    ts: iso(ts),
    sequence,
    side,
    price,
    quantity_delta,
  });
  const M = 60_000;
  // Book at T0; deltas; a snapshot at T0+5m equal to the replayed book; a gap [T0+7m, T0+9m) closed by an empty
  // book (no snapshot at its end); deltas after it build a new book.
  const series = {
    snapshots: [
      s(T0, 'bid', '0.4', '10'),
      s(T0, 'ask', '0.6', '5'),
      s(T0 + 5 * M, 'bid', '0.4', '7'),
      s(T0 + 5 * M, 'bid', '0.45', '1'),
      s(T0 + 5 * M, 'ask', '0.6', '5'),
    ],
    deltas: [
      d(T0, 1, 'bid', '0.4', '-1'), // at the snapshot's ts: applies after it
      d(T0 + M, 2, 'bid', '0.4', '-2'),
      d(T0 + M, 3, 'bid', '0.45', '1'),
      d(T0 + 5 * M, 4, 'ask', '0.6', '-5'),
      d(T0 + 6 * M, 5, 'ask', '0.55', '2'),
      d(T0 + 8 * M, 6, 'bid', '0.1', '99'), // inside the gap: never applied
      d(T0 + 9 * M, 7, 'bid', '0.3', '4'),
      d(T0 + 10 * M, 8, 'ask', '0.7', '1'),
    ],
    gaps: [{ from_ts: iso(T0 + 7 * M), to_ts: iso(T0 + 9 * M), reason: 'reconnect', detected_at: iso(T0 + 9 * M) }],
  };

  it('rebuild: snapshot + deltas up to at inclusive; in a gap: in_gap; after an empty-book gap: from empty', async () => {
    handler = recordedService(series);
    const client = new HistoryClient({ baseUrl: base });
    const at = async (t: number) => (await client.rebuild('venue_b', 'T', t)).toJSON();
    expect(await at(T0)).toMatchObject({
      bids: [{ price: '0.4', quantity: '9' }],
      asks: [{ price: '0.6', quantity: '5' }],
    });
    expect(await at(T0 + M - 1)).toMatchObject({ bids: [{ price: '0.4', quantity: '9' }] });
    expect(await at(T0 + M)).toMatchObject({
      bids: [
        { price: '0.45', quantity: '1' },
        { price: '0.4', quantity: '7' },
      ],
    });
    expect(await at(T0 + 6 * M)).toMatchObject({
      snapshot_ts: iso(T0 + 5 * M),
      asks: [{ price: '0.55', quantity: '2' }],
    });
    for (const t of [T0 + 7 * M, T0 + 8 * M, T0 + 9 * M - 1]) {
      const err = await client.rebuild('venue_b', 'T', t).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BookError);
      expect((err as BookError).code).toBe('in_gap');
    }
    expect(await at(T0 + 9 * M)).toMatchObject({ bids: [{ price: '0.3', quantity: '4' }], asks: [] });
    expect(await at(T0 + 11 * M)).toMatchObject({
      bids: [{ price: '0.3', quantity: '4' }],
      asks: [{ price: '0.7', quantity: '1' }],
    });
  });

  it('replay: the gaps, the first deltas and the first later snapshot are asked for at once, after the starting book', async () => {
    handler = recordedService(series);
    // What each fetch asks for, and the sets of requests waiting for their answers at once.
    const inFlight = new Set<string>();
    const together: string[] = [];
    const counting: typeof fetch = async (input, init) => {
      const url = new URL(String(input));
      const what = `${url.pathname.split('/')[3]}${url.searchParams.get('format') === 'digest' ? ' digests' : ''}`;
      inFlight.add(what);
      together.push([...inFlight].sort().join(', '));
      try {
        return await fetch(input, init);
      } finally {
        inFlight.delete(what);
      }
    };
    let books = 0;
    for await (const e of new HistoryClient({ baseUrl: base, fetch: counting }).replay('venue_b', 'T', {
      from: T0,
      to: T0 + 20 * M,
    })) {
      if (e.type === 'book') books++;
    }
    expect(books).toBe(6);
    // The starting book alone first (the others begin at its moment), then the three together.
    expect(together[0]).toBe('snapshots');
    expect(together).toContain('coverage, deltas, snapshots digests');
  });

  it('replay: a book per moment, the snapshot checked, the gap reported, the restart said', async () => {
    handler = recordedService(series);
    const events: string[] = [];
    for await (const e of new HistoryClient({ baseUrl: base }).replay('venue_b', 'T', { from: T0, to: T0 + 20 * M })) {
      const t = (ms: number) => `+${(ms - T0) / M}m`;
      if (e.type === 'book') events.push(`book ${t(e.at)} ${e.book.checksum()}`);
      else if (e.type === 'snapshot') events.push(`snapshot ${t(e.at)}${e.restarted ? ' restarted' : ''}`);
      else events.push(`gap ${e.gap.reason}`);
    }
    const cs = (rows: SnapshotRow[]) => OrderBook.fromSnapshot(rows).checksum();
    expect(events).toEqual([
      `book +0m ${cs([s(T0, 'bid', '0.4', '9'), s(T0, 'ask', '0.6', '5')])}`,
      `book +1m ${cs([s(T0, 'bid', '0.4', '7'), s(T0, 'bid', '0.45', '1'), s(T0, 'ask', '0.6', '5')])}`,
      'snapshot +5m',
      `book +5m ${cs([s(T0, 'bid', '0.4', '7'), s(T0, 'bid', '0.45', '1')])}`,
      `book +6m ${cs([s(T0, 'bid', '0.4', '7'), s(T0, 'bid', '0.45', '1'), s(T0, 'ask', '0.55', '2')])}`,
      'gap reconnect',
      'snapshot +9m restarted',
      `book +9m ${cs([s(T0, 'bid', '0.3', '4')])}`,
      `book +10m ${cs([s(T0, 'bid', '0.3', '4'), s(T0, 'ask', '0.7', '1')])}`,
    ]);
    // Without the snapshot checks: the same books, no checkpoint events, the restart after the gap still said.
    const quick: string[] = [];
    const replay = new HistoryClient({ baseUrl: base }).replay('venue_b', 'T', {
      from: T0,
      to: T0 + 20 * M,
      verifySnapshots: false,
    });
    for await (const e of replay) {
      const t = (ms: number) => `+${(ms - T0) / M}m`;
      if (e.type === 'book') quick.push(`book ${t(e.at)} ${e.book.checksum()}`);
      else if (e.type === 'snapshot') quick.push(`snapshot ${t(e.at)}${e.restarted ? ' restarted' : ''}`);
      else quick.push(`gap ${e.gap.reason}`);
    }
    expect(quick).toEqual(events.filter((e) => e !== 'snapshot +5m'));
    const strict = new HistoryClient({ baseUrl: base }).replay('venue_b', 'T', { from: T0, onGap: 'error' });
    const err = await (async () => {
      for await (const _e of strict) void _e;
    })().catch((e: unknown) => e);
    expect((err as BookError).code).toBe('in_gap');
  });

  it('replay against a service that answers JSON pages only: the same events, each snapshot checked', async () => {
    const events = async (client: HistoryClient) => {
      const out: string[] = [];
      for await (const e of client.replay('venue_b', 'T', { from: T0, to: T0 + 20 * M, pageSize: 2 })) {
        if (e.type === 'book') out.push(`book ${e.ts} ${e.book.checksum()}`);
        else if (e.type === 'snapshot') out.push(`snapshot ${e.ts}${e.restarted ? ' restarted' : ''}`);
        else out.push(`gap ${e.gap.reason}`);
      }
      return out;
    };
    handler = recordedService(series);
    const streamed = await events(new HistoryClient({ baseUrl: base }));
    expect(streamed).toContain(`snapshot ${iso(T0 + 5 * M)}`);
    handler = recordedService(series, { jsonOnly: true });
    expect(await events(new HistoryClient({ baseUrl: base }))).toEqual(streamed);
    expect(seen.some((s) => s.url.includes('/snapshots/') && s.url.includes('format=json'))).toBe(true);
    // A snapshot that disagrees is found there too.
    handler = recordedService({ ...series, deltas: series.deltas.filter((x) => x.sequence !== 3) }, { jsonOnly: true });
    await expect(events(new HistoryClient({ baseUrl: base }))).rejects.toMatchObject({
      code: 'snapshot_mismatch',
      where: { ts: T0 + 5 * M },
    });
  });

  it.each([
    ['its digest', true],
    ['its rows (a service without digests)', false],
  ])(
    'a snapshot that disagrees with the replayed book outside a gap is snapshot_mismatch, checked by %s',
    async (_, digests) => {
      handler = recordedService({ ...series, deltas: series.deltas.filter((x) => x.sequence !== 3) }, { digests });
      const err = await (async () => {
        for await (const _e of new HistoryClient({ baseUrl: base }).replay('venue_b', 'T', { from: T0 })) void _e;
      })().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BookError);
      expect(err).toMatchObject({ code: 'snapshot_mismatch', where: { ts: T0 + 5 * M } });
      // The later snapshots were read as digests, or (refused) as rows after the digests were asked for.
      const snapshotReads = seen.filter(
        (x) => x.url.includes('/snapshots/') && !x.url.includes('end_ts=' + encodeURIComponent(iso(T0))),
      );
      expect(snapshotReads.map((x) => new URL(x.url, 'http://x').searchParams.get('format'))).toEqual(
        digests ? ['digest'] : ['digest', 'ndjson'],
      );
    },
  );

  it('the digest check: the same books pass; a different quantity, a missing or an extra level is snapshot_mismatch; the restart after a gap reads that book’s rows', async () => {
    const at5 = series.snapshots.slice(2);
    const replayWith = async (snapshot5: SnapshotRow[], deltas = series.deltas) => {
      handler = recordedService({ ...series, snapshots: [...series.snapshots.slice(0, 2), ...snapshot5], deltas });
      const events: string[] = [];
      for await (const e of new HistoryClient({ baseUrl: base }).replay('venue_b', 'T', { from: T0, to: T0 + 6 * M })) {
        if (e.type === 'snapshot') events.push(`snapshot ${(e.at - T0) / M}m`);
      }
      return events;
    };
    const mismatch = async (snapshot5: SnapshotRow[], deltas = series.deltas) => {
      await expect(replayWith(snapshot5, deltas)).rejects.toMatchObject({
        code: 'snapshot_mismatch',
        where: { ts: T0 + 5 * M },
      });
    };
    expect(await replayWith(at5)).toEqual(['snapshot 5m']);
    const with45 = (quantity: string) => at5.map((r) => (r.price === '0.45' ? { ...r, quantity } : r));
    await mismatch(with45('1.000000000000000001'));
    await mismatch(with45('2'));
    await mismatch(at5.filter((r) => r.price !== '0.45'));
    await mismatch([...at5, s(T0 + 5 * M, 'ask', '0.65', '1')]);
    await mismatch(at5.map((r) => (r.price === '0.45' ? { ...r, price: '0.46' } : r)));
    await mismatch(at5.map((r) => (r.price === '0.45' ? { ...r, side: 'ask' as const, price: '0.65' } : r)));
    // A gap closed by a recorded book: the replay restarts from that book's rows (read for it), then checks the
    // next snapshot's digest against the book it built from them.
    const restart = {
      snapshots: [
        ...series.snapshots,
        s(T0 + 9 * M, 'bid', '0.2', '3'),
        s(T0 + 12 * M, 'bid', '0.2', '3'),
        s(T0 + 12 * M, 'bid', '0.3', '4'),
        s(T0 + 12 * M, 'ask', '0.7', '1'),
      ],
      deltas: series.deltas,
      gaps: series.gaps,
    };
    handler = recordedService(restart);
    const events: string[] = [];
    for await (const e of new HistoryClient({ baseUrl: base }).replay('venue_b', 'T', { from: T0 + 8 * M })) {
      if (e.type === 'snapshot') events.push(`snapshot ${(e.at - T0) / M}m${e.restarted ? ' restarted' : ''}`);
    }
    expect(events).toEqual(['snapshot 9m restarted', 'snapshot 12m']);
    expect(
      seen.some(
        (x) =>
          x.url.includes('/snapshots/') &&
          x.url.includes('format=ndjson') &&
          x.url.includes(encodeURIComponent(iso(T0 + 9 * M))),
      ),
    ).toBe(true);
  });

  it('the book a gap restarts from is read as rows and checked against its digest; digest pages are followed by their cursor', async () => {
    const restart = {
      snapshots: [...series.snapshots, s(T0 + 9 * M, 'bid', '0.2', '3'), s(T0 + 12 * M, 'bid', '0.2', '3')],
      deltas: series.deltas.filter((x) => x.sequence < 6),
      gaps: series.gaps,
    };
    const service = recordedService(restart);
    const digestAsked: string[] = [];
    // The later digests in two pages: the first ends with a cursor; `wrong` spoils the 9m book's digest.
    const paged =
      (mode: 'right' | 'wrong' | 'second refused'): Handler =>
      (req, res, body) => {
        const q = new URL(req.url ?? '', 'http://x').searchParams;
        if (q.get('format') !== 'digest') return service(req, res, body);
        digestAsked.push(q.has('cursor') ? `cursor=${q.get('cursor')}` : `start_ts=${q.get('start_ts')}`);
        // A replica from before digests answering the second page (mid-deploy): the rows take over from there.
        if (q.has('cursor') && mode === 'second refused') {
          return json(res, 400, { error: 'invalid_format', message: 'format must be json, ndjson, csv or parquet' });
        }
        const nine = OrderBook.fromSnapshot([s(T0 + 9 * M, 'bid', '0.2', '3')]);
        const twelve = OrderBook.fromSnapshot([s(T0 + 12 * M, 'bid', '0.2', '3')]);
        res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
        if (!q.has('cursor')) {
          return res.end(
            `{"ts":"${iso(T0 + 9 * M)}","levels":1,"digest":"${mode === 'wrong' ? '1' : nine.digest()}"}\n` +
              '{"type":"end","count":1,"next_cursor":"page-2"}\n',
          );
        }
        res.end(
          `{"ts":"${iso(T0 + 12 * M)}","levels":1,"digest":"${twelve.digest()}"}\n{"type":"end","count":1,"next_cursor":null}\n`,
        );
      };
    const replay = async () => {
      const events: string[] = [];
      for await (const e of new HistoryClient({ baseUrl: base }).replay('venue_b', 'T', { from: T0 + 8 * M })) {
        if (e.type === 'snapshot') events.push(`snapshot ${(e.at - T0) / M}m${e.restarted ? ' restarted' : ''}`);
      }
      return events;
    };
    handler = paged('right');
    expect(await replay()).toEqual(['snapshot 9m restarted', 'snapshot 12m']);
    expect(digestAsked).toEqual([`start_ts=${iso(T0 + 5 * M + 1)}`, 'cursor=page-2']);
    const before = seen.length;
    handler = paged('second refused');
    expect(await replay()).toEqual(['snapshot 9m restarted', 'snapshot 12m']);
    const rowsAfter = seen
      .slice(before)
      .map((x) => new URL(x.url, 'http://x').searchParams)
      .filter((q) => q.get('format') === 'ndjson' && q.get('start_ts') === iso(T0 + 9 * M + 1));
    expect(rowsAfter).toHaveLength(1);
    handler = paged('wrong');
    await expect(replay()).rejects.toMatchObject({ code: 'snapshot_mismatch', where: { ts: T0 + 9 * M } });
  });

  it.each([
    ['a cut digest stream', '{"ts":"TS","levels":3,"digest":"1"}\n{"ts":"TS","lev', 'stream_cut'],
    ['a digest stream without its end line', '', 'stream_cut'],
    ['an end line that miscounts', '{"type":"end","count":2,"next_cursor":null}\n', 'stream_cut'],
    [
      'an end line whose count is not a whole number',
      '{"type":"end","count":-1,"next_cursor":null}\n',
      'malformed_row',
    ],
    ['a digest that is not a decimal integer', '{"ts":"TS","levels":3,"digest":"0x12"}\n', 'malformed_row'],
    ['a line that is not JSON', 'nope\n', 'malformed_row'],
    ['a line that is JSON but not an object', 'null\n', 'malformed_row'],
  ])('%s is a typed error, never a silent pass', async (_what, body, code) => {
    const service = recordedService(series);
    handler = (req, res, text) => {
      if (new URL(req.url ?? '', 'http://x').searchParams.get('format') !== 'digest') return service(req, res, text);
      res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
      res.end(body.replaceAll('TS', iso(T0 + 5 * M)));
    };
    const err = await (async () => {
      for await (const _e of new HistoryClient({ baseUrl: base }).replay('venue_b', 'T', { from: T0 })) void _e;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataError);
    expect((err as DataError).code).toBe(code);
  });

  it('the snapshot check: by text as the service writes it, else by value; the last decimal, a missing or an extra level is snapshot_mismatch', async () => {
    const at5 = series.snapshots.slice(2);
    const replayWith = async (snapshot5: SnapshotRow[], deltas = series.deltas) => {
      handler = recordedService(
        { ...series, snapshots: [...series.snapshots.slice(0, 2), ...snapshot5], deltas },
        { digests: false },
      );
      const seen: string[] = [];
      for await (const e of new HistoryClient({ baseUrl: base }).replay('venue_b', 'T', { from: T0, to: T0 + 6 * M })) {
        if (e.type === 'snapshot') seen.push(`snapshot ${(e.at - T0) / M}m`);
      }
      return seen;
    };
    const mismatch = async (snapshot5: SnapshotRow[], deltas = series.deltas) => {
      const err = await replayWith(snapshot5, deltas).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BookError);
      expect(err).toMatchObject({ code: 'snapshot_mismatch', where: { ts: T0 + 5 * M } });
    };
    expect(await replayWith(at5)).toEqual(['snapshot 5m']);
    // Another order, another spelling, other keys' order: equal by value.
    expect(await replayWith([...at5].reverse())).toEqual(['snapshot 5m']);
    expect(await replayWith(at5.map((r) => ({ ...r, quantity: `${r.quantity}.00` })))).toEqual(['snapshot 5m']);
    expect(
      await replayWith(at5.map((r) => ({ quantity: r.quantity, price: r.price, side: r.side, ts: r.ts }))),
    ).toEqual(['snapshot 5m']);
    const with45 = (quantity: string) => at5.map((r) => (r.price === '0.45' ? { ...r, quantity } : r));
    await mismatch(with45('1.000000000000000001'));
    await mismatch(with45('0.999999999999999999'));
    await mismatch(at5.filter((r) => r.price !== '0.45'));
    await mismatch([...at5, s(T0 + 5 * M, 'ask', '0.65', '1')]);
    await mismatch(at5.map((r) => (r.price === '0.45' ? { ...r, price: '0.46' } : r)));
    // A book with 18 decimals: equal in its canonical text, a difference in the last place is not.
    const deltas = series.deltas.map((x) => (x.sequence === 3 ? { ...x, quantity_delta: '1.000000000000000001' } : x));
    expect(await replayWith(with45('1.000000000000000001'), deltas)).toEqual(['snapshot 5m']);
    await mismatch(with45('1.000000000000000002'), deltas);
    await mismatch(with45('1'), deltas);
  });

  it('the snapshot check: a line whose text starts at the book’s ts but parses to another moment is malformed_row', async () => {
    const service = recordedService(series, { digests: false });
    const [bid4, bid45, ask6] = series.snapshots.slice(2).map((r) => JSON.stringify(r)) as [string, string, string];
    // The same levels, the 0.45 line with a second "ts" (JSON.parse keeps the last: a minute later).
    const odd = bid45.replace(`"ts":"${iso(T0 + 5 * M)}",`, `"ts":"${iso(T0 + 5 * M)}","ts":"${iso(T0 + 6 * M)}",`);
    handler = (req, res, body) => {
      const url = new URL(req.url ?? '', 'http://x');
      if (
        !url.pathname.includes('/snapshots/') ||
        url.searchParams.get('format') === 'digest' ||
        Date.parse(url.searchParams.get('start_ts') ?? '') <= T0
      ) {
        return service(req, res, body);
      }
      res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
      res.end(`${bid4}\n${odd}\n${ask6}\n{"type":"end","count":3,"next_cursor":null}\n`);
    };
    const err = await (async () => {
      for await (const _e of new HistoryClient({ baseUrl: base }).replay('venue_b', 'T', { from: T0 })) void _e;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataError);
    expect((err as DataError).code).toBe('malformed_row');
  });
});
