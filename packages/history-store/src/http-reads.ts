/**
 * How every read reaches ClickHouse: one POST to its HTTP interface with node:http, the answer handed over as the
 * response stream itself. Inserts, migrations and the control statements stay on @clickhouse/client (connection.ts).
 *
 * Why not the library for reads (measured, docs/benchmarks.md, "Reads without the client library"): before each
 * request its socket pool waits one timer turn (`await sleep(0)`, against stale keep-alive sockets on a loaded
 * machine) and it sends the query through `Readable.from` and `pipeline`. That put 2 ms between a read being asked
 * for and its request leaving the process (traced on a 10,000-row page), a fixed cost on every page, book and
 * coverage answer. What the wait guards against is handled here without it:
 *
 * - an idle socket is dropped before the server drops it: Node's agent takes the server's `Keep-Alive: timeout=N`
 *   hint (it closes the socket a second before), and IDLE_SOCKET_TTL_MS caps it;
 * - a reused socket the server closed meanwhile fails before any byte of an answer (ECONNRESET, EPIPE): the request
 *   is sent once more on a new socket (the server never saw it; a read is safe to repeat), as Node's documentation
 *   advises (`request.reusedSocket`).
 *
 * An answer other than 200 is read (up to ERROR_BODY_BYTES) and becomes an Error whose message is the server's text
 * (`Code: N. DB::Exception: …`, or 18.16's `Code: N, e.displayText() = …`), which classifyClickHouseError reads.
 * An exception the server appends to a 200 answer after it started sending is the consumer's to find (the row
 * renderer's and the JSON parser's checks), as it was with the library's raw streams.
 */
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';

/** Settings by name, sent in the URL (a boolean as 1 or 0, an undefined one not at all). */
export type Settings = Readonly<Record<string, unknown>>;

export interface HttpReadOptions {
  /** http(s)://host:port, without credentials. */
  origin: string;
  username?: string;
  password?: string;
  /** Sockets open at once at most. */
  maxSockets: number;
  /** A request whose socket is silent this long fails (the server's own limits end queries earlier). */
  requestTimeoutMs: number;
  /** Settings sent with every read (the query's own settings override them). */
  settings?: Settings;
  /** Sent as the User-Agent (ClickHouse shows it in system.processes and the query log). */
  userAgent: string;
}

export interface HttpRead {
  /** The SQL, its output format named. */
  query: string;
  queryId: string;
  settings?: Settings;
  signal?: AbortSignal;
}

export interface HttpReads {
  /** Sends the query; resolves with the answer's body as it arrives once the server answered 200. */
  read(request: HttpRead): Promise<Readable>;
  close(): void;
}

/** An idle socket is closed after this long at most (the server's Keep-Alive hint may make it shorter). */
const IDLE_SOCKET_TTL_MS = 2500;
/** An error answer is read up to this many bytes. */
const ERROR_BODY_BYTES = 64 * 1024;
/** Errors of a socket the server closed while it was idle in our pool. */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);

export function createHttpReads(options: HttpReadOptions): HttpReads {
  const secure = options.origin.startsWith('https:');
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets, timeout: IDLE_SOCKET_TTL_MS };
  const agent = secure ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  const request = secure ? https.request : http.request;
  const headers: http.OutgoingHttpHeaders = { 'User-Agent': options.userAgent };
  if (options.username !== undefined) {
    const credentials = `${options.username}:${options.password ?? ''}`;
    headers.Authorization = `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;
  }

  const send = (r: HttpRead, retried: boolean): Promise<Readable> =>
    new Promise((resolve, reject) => {
      const params = new URLSearchParams({ query_id: r.queryId });
      for (const [name, value] of Object.entries({ ...options.settings, ...r.settings })) {
        if (value !== undefined) params.set(name, typeof value === 'boolean' ? (value ? '1' : '0') : String(value));
      }
      const body = Buffer.from(r.query, 'utf8');
      const req = request(`${options.origin}/?${params.toString()}`, {
        method: 'POST',
        agent,
        signal: r.signal,
        timeout: options.requestTimeoutMs,
        headers: { ...headers, 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': body.length },
      });
      let answered = false;
      req.on('timeout', () =>
        req.destroy(new Error(`Timeout error: no data from ClickHouse for ${options.requestTimeoutMs} ms`)),
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (answered) return; // the response stream carries it
        if (!retried && req.reusedSocket && STALE_SOCKET_CODES.has(err.code ?? '') && r.signal?.aborted !== true) {
          send(r, true).then(resolve, reject);
          return;
        }
        reject(err);
      });
      req.on('response', (res) => {
        answered = true;
        if (res.statusCode === 200) {
          resolve(res);
          return;
        }
        const chunks: Buffer[] = [];
        let length = 0;
        res.on('data', (chunk: Buffer) => {
          if (length < ERROR_BODY_BYTES) chunks.push(chunk);
          length += chunk.length;
        });
        const fail = () => {
          const text = Buffer.concat(chunks).subarray(0, ERROR_BODY_BYTES).toString('utf8').trim();
          reject(new Error(text === '' ? `ClickHouse answered HTTP ${res.statusCode ?? 0}` : text));
        };
        res.on('end', fail);
        res.on('error', fail);
      });
      req.end(body);
    });

  return {
    read: (r) => send(r, false),
    close: () => agent.destroy(),
  };
}
