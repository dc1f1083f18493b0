import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { classifyClickHouseError } from './errors';
import { createHttpReads, type HttpReads } from './http-reads';

/** What a stand-in for ClickHouse's HTTP interface saw of one request. */
interface Seen {
  url: string;
  body: string;
  headers: http.IncomingHttpHeaders;
  /** The socket it came on (numbered in order of connection). */
  socket: number;
}

async function body(stream: Readable): Promise<string> {
  let text = '';
  for await (const chunk of stream as AsyncIterable<Buffer>) text += chunk.toString('utf8');
  return text;
}

describe('reads over HTTP (node:http, not the client library)', () => {
  let server: http.Server;
  let origin: string;
  let seen: Seen[];
  /** How the stand-in answers a request; default: 200 with the query echoed. */
  let answer: (req: http.IncomingMessage, res: http.ServerResponse, seen: Seen) => void;
  let reads: HttpReads;

  beforeEach(async () => {
    seen = [];
    answer = (_req, res, s) => res.end(`echo:${s.body}`);
    let sockets = 0;
    const ids = new WeakMap<object, number>();
    server = http.createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString('utf8')));
      req.on('end', () => {
        if (!ids.has(req.socket)) ids.set(req.socket, ++sockets);
        const s: Seen = { url: req.url ?? '', body: text, headers: req.headers, socket: ids.get(req.socket) as number };
        seen.push(s);
        answer(req, res, s);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    reads.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('POSTs the query with the query id and settings in the URL (the read’s own over the shared ones), credentials as basic auth', async () => {
    reads = createHttpReads({
      origin,
      username: 'reader',
      password: 'p@ss:word',
      maxSockets: 4,
      requestTimeoutMs: 5000,
      settings: { max_threads: 4, skip_unavailable_shards: 0, unset: undefined },
      userAgent: 'depthgate test',
    });
    const text = await body(
      await reads.read({
        query: 'SELECT 1 FORMAT RowBinary',
        queryId: 'dg-test-1',
        settings: { max_threads: 1, flag: true },
      }),
    );
    expect(text).toBe('echo:SELECT 1 FORMAT RowBinary');
    const [s] = seen as [Seen];
    const params = new URL(s.url, origin).searchParams;
    expect(Object.fromEntries(params)).toEqual({
      query_id: 'dg-test-1',
      max_threads: '1',
      skip_unavailable_shards: '0',
      flag: '1',
    });
    expect(s.headers.authorization).toBe(`Basic ${Buffer.from('reader:p@ss:word').toString('base64')}`);
    expect(s.headers['user-agent']).toBe('depthgate test');
  });

  it('keeps sockets alive between reads', async () => {
    reads = createHttpReads({ origin, maxSockets: 4, requestTimeoutMs: 5000, userAgent: 't' });
    for (const id of ['a', 'b', 'c']) await body(await reads.read({ query: id, queryId: id }));
    expect(seen.map((s) => s.socket)).toEqual([1, 1, 1]);
    expect(seen[0]?.headers.authorization).toBeUndefined();
  });

  it('sends a read again on a new socket when the server had closed the reused one (nothing answered)', async () => {
    reads = createHttpReads({ origin, maxSockets: 4, requestTimeoutMs: 5000, userAgent: 't' });
    await body(await reads.read({ query: 'first', queryId: 'q1' }));
    // The next request on that socket finds it closed by the server: no answer, the connection reset.
    answer = (req, res, s) => {
      if (s.socket === 1) req.socket.destroy();
      else res.end(`echo:${s.body}`);
    };
    expect(await body(await reads.read({ query: 'second', queryId: 'q2' }))).toBe('echo:second');
    expect(seen.map((s) => [s.body, s.socket])).toEqual([
      ['first', 1],
      ['second', 1],
      ['second', 2],
    ]);
  });

  it('does not send a read twice when a new socket fails', async () => {
    reads = createHttpReads({ origin, maxSockets: 4, requestTimeoutMs: 5000, userAgent: 't' });
    answer = (req) => req.socket.destroy();
    const failure = await reads.read({ query: 'q', queryId: 'q1' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(classifyClickHouseError(failure).kind).toBe('unavailable');
    expect(seen).toHaveLength(1);
  });

  it('an answer other than 200 fails with the server’s text, which classifies (18.16’s form and the current one)', async () => {
    reads = createHttpReads({ origin, maxSockets: 4, requestTimeoutMs: 5000, userAgent: 't' });
    const cases: [string, string, number][] = [
      ['Code: 159, e.displayText() = DB::Exception: Timeout exceeded: elapsed 1.0 seconds', 'timeout', 159],
      ['Code: 60. DB::Exception: Table bench.nope does not exist. (UNKNOWN_TABLE)', 'error', 60],
      ['Code: 202. DB::Exception: Too many simultaneous queries. (TOO_MANY_SIMULTANEOUS_QUERIES)', 'unavailable', 202],
    ];
    for (const [text, kind, code] of cases) {
      answer = (_req, res) => {
        res.statusCode = 500;
        res.end(`${text}\n`);
      };
      const failure = await reads.read({ query: 'q', queryId: 'q' }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect((failure as Error).message).toBe(text);
      expect(classifyClickHouseError(failure)).toMatchObject({ kind, code });
    }
    answer = (_req, res) => {
      res.statusCode = 503;
      res.end();
    };
    await expect(reads.read({ query: 'q', queryId: 'q' })).rejects.toThrow('ClickHouse answered HTTP 503');
  });

  it('an aborted read ends its request: the server sees the connection close before its answer ended', async () => {
    reads = createHttpReads({ origin, maxSockets: 4, requestTimeoutMs: 5000, userAgent: 't' });
    let closedEarly: boolean | undefined;
    const closed = new Promise<void>((resolve) => {
      answer = (_req, res) => {
        res.write('partial'); // and never ends
        res.on('close', () => {
          closedEarly = !res.writableEnded;
          resolve();
        });
      };
    });
    const controller = new AbortController();
    const stream = await reads.read({ query: 'q', queryId: 'q', signal: controller.signal });
    controller.abort();
    await expect(body(stream)).rejects.toThrow();
    await closed;
    expect(closedEarly).toBe(true);
  });

  it('a socket silent for the request timeout fails as unavailable', async () => {
    reads = createHttpReads({ origin, maxSockets: 4, requestTimeoutMs: 100, userAgent: 't' });
    answer = () => undefined; // never answers
    const failure = await reads.read({ query: 'q', queryId: 'q' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect((failure as Error).message).toMatch(/^Timeout error/);
    expect(classifyClickHouseError(failure).kind).toBe('unavailable');
  });
});
