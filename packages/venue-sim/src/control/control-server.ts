import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { z } from 'zod';
import { FEED_FAULT_KINDS } from '../feeds/feed-hub';
import { FAULT_KINDS } from '../http/faults';
import { Router } from '../http/router';
import { json, type SimRequest, type SimResponse } from '../http/types';
import type { SimLogger } from '../settings';
import type { Simulator } from '../types';

const faultSchema = z.object({
  platform: z.string().min(1),
  route: z.string().startsWith('/').optional(),
  kind: z.enum(FAULT_KINDS),
  ms: z.number().int().min(0).max(600_000).optional(),
  status: z.number().int().min(100).max(599).optional(),
  times: z.number().int().min(1).optional(),
});

const rule = {
  limit: z.number().int().min(1),
  windowMs: z.number().int().min(1),
  burst: z.number().int().min(1).optional(),
};
const rateSchema = z
  .object({
    ...rule,
    overflow: z.enum(['reject', 'queue', 'delay']).optional(),
    queue: z.number().int().min(0).optional(),
    routes: z.array(z.object({ prefix: z.string().startsWith('/'), ...rule })).optional(),
    authenticated: z
      .object({ ...rule, routes: z.array(z.object({ prefix: z.string().startsWith('/'), ...rule })).optional() })
      .optional(),
  })
  .nullable();

const feedFaultSchema = z.object({
  platform: z.string().min(1),
  kind: z.enum(FEED_FAULT_KINDS),
  ticker: z.string().min(1).optional(),
  count: z.number().int().min(1).max(1_000_000).optional(),
  ms: z.number().int().min(1).max(600_000).optional(),
});

const stepSchema = z.object({ n: z.number().int().min(1).max(1_000_000).default(1) });
const rateBody = z.object({ updatesPerSecond: z.number().int().min(0).max(1_000_000) });

const problem = (status: number, error: string, message: string) => json(status, { error, message });

/** `since`: epoch ms or RFC 3339; undefined when absent, NaN when malformed. */
function sinceParam(since: string | null): number | undefined {
  if (since === null || since === '') return undefined;
  return /^\d+$/.test(since) ? Number(since) : Date.parse(since);
}

/**
 * The control API on the base port: the programmatic API over HTTP, for the CLI and other projects' CI suites.
 * Everything is JSON; errors are `{"error","message"}`.
 */
export class ControlServer {
  private readonly server: http.Server;
  private readonly router = new Router();
  private stopping = false;

  constructor(
    private readonly sim: Simulator,
    deps: { logger?: SimLogger | undefined },
  ) {
    this.routes();
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        deps.logger?.error({ err }, 'control request failed');
        if (!res.headersSent) this.write(res, problem(500, 'internal', String(err)));
      });
    });
  }

  listen(port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        const addr = this.server.address();
        resolve(typeof addr === 'object' && addr ? addr.port : port);
      });
    });
  }

  markStopping(): void {
    this.stopping = true;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private body<T>(req: SimRequest, schema: z.ZodType<T>): T | SimResponse {
    let value: unknown = {};
    if (req.body.length > 0) {
      try {
        value = JSON.parse(req.body.toString('utf8'));
      } catch {
        return problem(400, 'bad_request', 'body is not JSON');
      }
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      return problem(
        400,
        'bad_request',
        parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
      );
    }
    return parsed.data;
  }

  private routes(): void {
    const r = this.router;
    const sim = this.sim;
    const isResponse = (v: unknown): v is SimResponse =>
      typeof v === 'object' && v !== null && 'status' in v && 'body' in v;

    r.get('/health', () => json(200, { status: 'ok' }));
    r.get('/ready', () => (this.stopping ? json(503, { status: 'stopping' }) : json(200, { status: 'ready' })));
    r.get('/control', () =>
      json(200, {
        urls: sim.urls,
        feeds: sim.feeds,
        seed: sim.seed,
        books: Object.fromEntries(sim.books.platforms().map((p) => [p, sim.books.tickers(p).length])),
        paused: sim.books.isPaused(),
      }),
    );
    r.get('/control/credentials', () => json(200, sim.credentials));
    r.get('/control/env', () => json(200, sim.env()));
    r.get('/control/requests', (req) => {
      const platform = req.params.get('platform') ?? undefined;
      const pathPrefix = req.params.get('pathPrefix') ?? undefined;
      const requests = sim.requests({ ...(platform ? { platform } : {}), ...(pathPrefix ? { pathPrefix } : {}) });
      return json(200, { count: requests.length, requests });
    });
    r.delete('/control/requests', () => {
      sim.clearRequests();
      return json(200, { cleared: true });
    });

    r.get('/control/faults', () => json(200, { faults: sim.faults.list() }));
    r.post('/control/faults', (req) => {
      const spec = this.body(req, faultSchema);
      if (isResponse(spec)) return spec;
      return json(201, { id: sim.faults.inject(spec) });
    });
    r.delete('/control/faults', () => {
      sim.faults.clear();
      return json(200, { cleared: true });
    });
    r.delete('/control/faults/:id', (req) =>
      sim.faults.remove(req.pathParams.id as string)
        ? json(200, { removed: req.pathParams.id })
        : problem(404, 'not_found', `no fault ${req.pathParams.id}`),
    );

    r.get('/control/rate-limits/:platform', (req) =>
      json(200, { platform: req.pathParams.platform, limit: sim.rateLimits.get(req.pathParams.platform as string) }),
    );
    r.add('PUT', '/control/rate-limits/:platform', (req) => {
      const cfg = this.body(req, rateSchema);
      if (isResponse(cfg)) return cfg;
      sim.rateLimits.set(req.pathParams.platform as string, cfg);
      return json(200, { platform: req.pathParams.platform, limit: cfg });
    });
    r.delete('/control/rate-limits/:platform', (req) => {
      sim.rateLimits.set(req.pathParams.platform as string, null);
      return json(200, { platform: req.pathParams.platform, limit: null });
    });

    r.post('/control/feed-faults', (req) => {
      const spec = this.body(req, feedFaultSchema);
      if (isResponse(spec)) return spec;
      return json(201, sim.feedFaults.inject(spec));
    });
    r.delete('/control/feed-faults', () => {
      sim.feedFaults.clear();
      return json(200, { cleared: true });
    });
    r.get('/control/feed-faults/:platform', (req) =>
      json(200, sim.feedFaults.stats(req.pathParams.platform as string)),
    );

    // REQUIRED contract: the recorded exchanges keyed by the history service's exchange keys.
    r.get('/control/tickers', () => json(200, sim.recordedTickers()));
    r.get('/control/books', () =>
      json(200, Object.fromEntries(sim.books.platforms().map((p) => [p, sim.books.tickers(p)]))),
    );
    r.get('/control/books/:platform', (req) =>
      json(200, { platform: req.pathParams.platform, tickers: sim.books.tickers(req.pathParams.platform as string) }),
    );
    r.get('/control/books/:platform/:ticker', (req) => {
      const { platform, ticker } = req.pathParams as { platform: string; ticker: string };
      const at = req.params.get('at');
      if (at === null || at === '')
        return json(200, {
          platform,
          ticker,
          ...sim.books.last(platform, ticker),
          ...sim.books.book(platform, ticker),
        });
      const ts = /^\d+$/.test(at) ? Number(at) : Date.parse(at);
      if (Number.isNaN(ts)) return problem(400, 'bad_request', 'at must be epoch milliseconds or an RFC 3339 time');
      return json(200, { platform, ticker, at: ts, ...sim.books.bookAt(platform, ticker, ts) });
    });
    r.get('/control/books/:platform/:ticker/events', (req) => {
      const { platform, ticker } = req.pathParams as { platform: string; ticker: string };
      const ts = sinceParam(req.params.get('since'));
      if (Number.isNaN(ts)) return problem(400, 'bad_request', 'since must be epoch ms or RFC 3339');
      const events = sim.books.events(platform, ticker, ts);
      return json(200, { platform, ticker, count: events.length, events });
    });
    // The oracle of the trades tests: every trade the books made, as the venue publishes it.
    r.get('/control/trades', (req) => {
      const platform = req.params.get('platform');
      if (!platform) return problem(400, 'bad_request', 'platform is required (a platform with order books)');
      const ticker = req.params.get('ticker') || undefined;
      const since = sinceParam(req.params.get('since'));
      if (Number.isNaN(since)) return problem(400, 'bad_request', 'since must be epoch ms or RFC 3339');
      const trades = sim.trades(platform, ticker, since);
      return json(200, { platform, ...(ticker ? { ticker } : {}), count: trades.length, trades });
    });
    r.post('/control/books/pause', () => {
      sim.books.pause();
      return json(200, { paused: true });
    });
    r.post('/control/books/resume', () => {
      sim.books.resume();
      return json(200, { paused: false });
    });
    r.post('/control/books/step', (req) => {
      const b = this.body(req, stepSchema);
      if (isResponse(b)) return b;
      sim.books.step(b.n);
      return json(200, { stepped: b.n });
    });
    r.add('PUT', '/control/books/rate', (req) => {
      const b = this.body(req, rateBody);
      if (isResponse(b)) return b;
      sim.books.setUpdatesPerSecond(b.updatesPerSecond);
      return json(200, b);
    });

    r.get('/control/ibkr/session', () => json(200, { authenticated: sim.ibkr.isAuthenticated() }));
    r.post('/control/ibkr/expire', () => {
      sim.ibkr.expireSession();
      return json(200, { authenticated: false });
    });
    r.post('/control/ibkr/login', () => {
      sim.ibkr.login();
      return json(200, { authenticated: true });
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : url.slice(q + 1);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const match = this.router.match(req.method ?? 'GET', path);
    if (!match) return this.write(res, problem(404, 'not_found', `no control route ${req.method} ${path}`));
    const simReq = {
      method: req.method ?? 'GET',
      path,
      query,
      params: new URLSearchParams(query),
      headers: req.headers,
      body: Buffer.concat(chunks),
      pathParams: match.params,
    } as SimRequest;
    try {
      this.write(res, await match.route.handler(simReq));
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'not_found') return this.write(res, problem(404, 'not_found', (err as Error).message));
      if (code === 'bad_request' || err instanceof RangeError)
        return this.write(res, problem(400, 'bad_request', (err as Error).message));
      throw err;
    }
  }

  private write(res: ServerResponse, r: SimResponse): void {
    const body = Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body);
    res.writeHead(r.status, {
      'content-type': r.contentType ?? 'application/json',
      'content-length': String(body.length),
    });
    res.end(body);
  }
}
