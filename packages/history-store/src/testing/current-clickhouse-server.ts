/**
 * A current ClickHouse for tests: the engine of the `chdb` npm package (ClickHouse 26.7, installed by `./dev test`
 * into `.tools/chdb`, outside the workspace) behind the part of ClickHouse's HTTP interface that @clickhouse/client
 * and our stores use, so a HistoryStore runs on it unchanged. A process of its own (the native engine stays out of
 * the test runner's workers), started by `startCurrentClickHouse` (current-clickhouse.ts):
 *
 *   node current-clickhouse-server.ts --chdb DIR --data DIR   → prints `listening <port> <engine version>`
 *
 * HTTP: POST / with the query in the body, or in `query` with an insert's rows in the body; settings, `query_id`
 * and `database` as URL parameters; answers with `X-ClickHouse-Query-Id` and `X-ClickHouse-Summary`, and failures
 * as ClickHouse sends them (status 500, `Code: N. DB::Exception: …`, `X-ClickHouse-Exception-Code`).
 *
 * The insert queue. An embedded engine writes every insert at once, but a current server with `async_insert = 1`
 * (the default since 26.2, as this engine's own system.settings says) queues an insert's rows as soon as they are
 * read, writes them later — several inserts of one table merged into one part — and writes them also when the
 * query was cancelled or its client went away. This server models that queue, driven by the engine's defaults and
 * the request's settings, so tests can show what the pinned settings (connection.ts) prevent. Control paths, for
 * tests only: `/__dg/fail-next-insert?how=stall|commit-then-drop`, `/__dg/hold-queue`, `/__dg/release-queue`,
 * `/__dg/ignore-setting?name=…` (behave as a server that overrides what the client asked), `/__dg/state`.
 */
import { mkdirSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

interface ChdbResult {
  bytes(): Uint8Array;
  text(): string;
  rowsRead: number;
  bytesRead: number;
}
interface ChdbSession {
  queryAsync(query: string, options?: { format?: string }): Promise<ChdbResult>;
  close(): void;
}

function arg(name: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? process.argv[i + 1] : undefined;
  if (!value) throw new Error(`current-clickhouse-server: --${name} is required`);
  return value;
}

const chdbDir = arg('chdb');
const dataDir = arg('data');
mkdirSync(dataDir, { recursive: true });
const requireFrom = createRequire(path.join(chdbDir, 'package.json'));
const { Session } = requireFrom('chdb') as { Session: new (path: string) => ChdbSession };
const session = new Session(dataDir);

/** URL parameters that are not settings, and settings of the HTTP layer that the engine does not have. */
const NOT_SETTINGS = new Set(['query', 'query_id', 'database', 'session_id', 'default_format', 'role']);
const HTTP_ONLY = new Set([
  'enable_http_compression',
  'send_progress_in_http_headers',
  'wait_end_of_query',
  'http_headers_progress_interval_ms',
  'http_response_buffer_size',
  'http_zlib_compression_level',
]);
/** Settings this server implements itself (the insert queue). */
const MODELLED = new Set(['async_insert', 'wait_for_async_insert']);
const SETTING_NAME = /^[a-z][a-z0-9_]{0,99}$/;

/** One statement at a time on the session: a request's SETs and its query must not interleave with another's. */
let chain: Promise<unknown> = Promise.resolve();
function exclusive<T>(fn: () => Promise<T>): Promise<T> {
  const next = chain.then(fn);
  chain = next.catch(() => undefined);
  return next;
}

/** The engine's default of every setting a request has named so far; each request sets all of them afresh. */
const defaults = new Map<string, string>();
async function defaultOf(name: string): Promise<string | undefined> {
  if (!defaults.has(name)) {
    const r = await session.queryAsync(`SELECT value FROM system.settings WHERE name = '${name}'`, {
      format: 'TabSeparated',
    });
    const value = r.text().replace(/\n$/, '');
    if (value === '') return undefined;
    defaults.set(name, value);
  }
  return defaults.get(name);
}

const ignored = new Set<string>();

async function effective(settings: Map<string, string>, name: string): Promise<string | undefined> {
  return (ignored.has(name) ? undefined : settings.get(name)) ?? (await defaultOf(name));
}

const quote = (v: string) => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** Runs one statement with the request's settings (every setting named before is reset to its default). */
async function execute(sqlText: string, settings: Map<string, string>): Promise<ChdbResult> {
  return exclusive(async () => {
    const names = new Set([...defaults.keys(), ...settings.keys()].filter((n) => !MODELLED.has(n)));
    const sets: string[] = [];
    for (const name of names) {
      const value = settings.get(name) ?? (await defaultOf(name));
      if (value !== undefined) sets.push(`${name} = ${quote(value)}`);
    }
    if (sets.length > 0) await session.queryAsync(`SET ${sets.join(', ')}`, { format: 'TabSeparated' });
    return session.queryAsync(sqlText, { format: 'TabSeparated' });
  });
}

interface Queued {
  head: string;
  body: Buffer;
  settings: Map<string, string>;
  written: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}
const queue: Queued[] = [];
let held = false;
let flushTimer: NodeJS.Timeout | undefined;

/** Writes the queue: the rows of every queued insert with the same INSERT text as one insert (one part). */
async function flush(): Promise<void> {
  flushTimer = undefined;
  const entries = queue.splice(0);
  const byHead = new Map<string, Queued[]>();
  for (const e of entries) byHead.set(e.head, [...(byHead.get(e.head) ?? []), e]);
  for (const [head, group] of byHead) {
    try {
      await execute(`${head}\n${Buffer.concat(group.map((e) => e.body)).toString('utf8')}`, group[0]!.settings);
      for (const e of group) e.resolve();
    } catch (err) {
      for (const e of group) e.reject(err);
    }
  }
}

async function scheduleFlush(): Promise<void> {
  if (held || flushTimer) return;
  const busy = Number((await defaultOf('async_insert_busy_timeout_max_ms')) ?? 200);
  flushTimer = setTimeout(() => void flush(), busy);
}

const inserts: { table: string; queued: boolean; settings: Record<string, string> }[] = [];
let failNext: 'stall' | 'commit-then-drop' | undefined;

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      resolve(req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body);
    });
    req.on('error', reject);
  });
}

function summary(rows: number, bytes: number): string {
  return JSON.stringify({
    read_rows: String(rows),
    read_bytes: String(bytes),
    written_rows: '0',
    written_bytes: '0',
    total_rows_to_read: '0',
    result_rows: '0',
    result_bytes: '0',
    elapsed_ns: '0',
  });
}

function fail(res: http.ServerResponse, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  const code = /Code: (\d+)/.exec(message)?.[1] ?? '1001';
  if (res.headersSent || res.destroyed) return void res.destroy();
  res.writeHead(500, { 'Content-Type': 'text/plain; charset=UTF-8', 'X-ClickHouse-Exception-Code': code });
  res.end(`${message.trim()}\n`);
}

const closed = (res: http.ServerResponse) =>
  new Promise<void>((resolve) => (res.destroyed ? resolve() : res.once('close', () => resolve())));

async function handleInsert(
  res: http.ServerResponse,
  queryId: string,
  head: string,
  body: Buffer,
  settings: Map<string, string>,
): Promise<void> {
  const injected = failNext;
  failNext = undefined;
  const queued = (await effective(settings, 'async_insert')) === '1';
  inserts.push({
    table: /^INSERT INTO\s+(\S+)/i.exec(head)?.[1] ?? '?',
    queued,
    settings: Object.fromEntries(settings),
  });
  const ok = () => {
    if (res.destroyed) return;
    res.writeHead(200, { 'X-ClickHouse-Query-Id': queryId, 'X-ClickHouse-Summary': summary(0, 0) });
    res.end();
  };
  if (queued) {
    // The rows are on the server from here on: they will be written whatever happens to this request.
    let resolve!: () => void;
    let reject!: (err: unknown) => void;
    const written = new Promise<void>((res2, rej2) => {
      resolve = res2;
      reject = rej2;
    });
    written.catch(() => undefined);
    queue.push({ head, body, settings, written, resolve, reject });
    await scheduleFlush();
    if (injected === 'stall') return closed(res);
    if (injected === 'commit-then-drop') return void res.destroy();
    if ((await effective(settings, 'wait_for_async_insert')) === '1') {
      try {
        await written;
      } catch (err) {
        return fail(res, err);
      }
    }
    return ok();
  }
  // Synchronous: committed when the query completes; a client gone before that cancels it (nothing written).
  if (injected === 'stall') return closed(res);
  await execute(`${head}\n${body.toString('utf8')}`, settings);
  if (injected === 'commit-then-drop') return void res.destroy();
  ok();
}

async function control(url: URL, res: http.ServerResponse): Promise<void> {
  const reply = (value: unknown) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(value));
  };
  switch (url.pathname) {
    case '/__dg/fail-next-insert': {
      const how = url.searchParams.get('how');
      if (how !== 'stall' && how !== 'commit-then-drop') throw new Error(`unknown failure ${how}`);
      failNext = how;
      return reply({ ok: true });
    }
    case '/__dg/hold-queue':
      held = true;
      return reply({ ok: true });
    case '/__dg/release-queue':
      held = false;
      await flush();
      return reply({ ok: true });
    case '/__dg/ignore-setting': {
      const name = url.searchParams.get('name') ?? '';
      if (!SETTING_NAME.test(name)) throw new Error('not a setting name');
      ignored.add(name);
      return reply({ ok: true });
    }
    case '/__dg/state':
      return reply({
        inserts,
        queued: queue.length,
        defaults: Object.fromEntries(
          await Promise.all(
            ['async_insert', 'wait_for_async_insert'].map(async (n) => [n, await defaultOf(n)] as const),
          ),
        ),
      });
    default:
      throw new Error(`unknown control path ${url.pathname}`);
  }
}

const server = http.createServer((req, res) => {
  void (async () => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    try {
      if (url.pathname === '/ping') {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        return res.end('Ok.\n');
      }
      if (url.pathname.startsWith('/__dg/')) return await control(url, res);
      const settings = new Map<string, string>();
      for (const [name, value] of url.searchParams) {
        if (NOT_SETTINGS.has(name) || HTTP_ONLY.has(name) || name.startsWith('param_')) continue;
        if (!SETTING_NAME.test(name)) throw new Error(`Code: 115. DB::Exception: Unknown setting ${name}`);
        settings.set(name, value);
      }
      const queryId = url.searchParams.get('query_id') ?? '';
      const body = await readBody(req);
      const inQuery = url.searchParams.get('query');
      if (inQuery !== null && /^\s*INSERT\b/i.test(inQuery)) {
        return await handleInsert(res, queryId, inQuery, body, settings);
      }
      const text = inQuery === null ? body.toString('utf8') : `${inQuery}\n${body.toString('utf8')}`;
      const result = await execute(text, settings);
      const bytes = Buffer.from(result.bytes());
      res.writeHead(200, {
        'Content-Type': 'application/octet-stream',
        'X-ClickHouse-Query-Id': queryId,
        'X-ClickHouse-Summary': summary(result.rowsRead, result.bytesRead),
      });
      res.end(bytes);
    } catch (err) {
      fail(res, err);
    }
  })();
});

server.listen(0, '127.0.0.1', () => {
  void (async () => {
    const version = (await session.queryAsync('SELECT version()', { format: 'TabSeparated' })).text().trim();
    const { port } = server.address() as { port: number };
    process.stdout.write(`listening ${port} ${version}\n`);
  })();
});

const stop = () => {
  server.close();
  session.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
