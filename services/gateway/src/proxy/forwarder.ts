import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { Pool, type Dispatcher } from 'undici';
import { AppError, type Logger } from '@depthgate/service-kit';
import type { GatewayConfig } from '../config';
import type { GatewayMetrics } from '../metrics';
import type { Platform, Route, UpstreamTarget } from '../platforms/types';
import type { RequestBody } from './body';
import type { UpstreamBudgets } from './budget';
import { acceptableAgeMs, CacheRules, MicroCache, storableTtl, type CachedResponse } from './cache';
import { Circuit, type CircuitState } from './circuit';
import { callerResponseHeaders, isConditional, upstreamRequestHeaders, varyKey } from './headers';
import { SharedResponse, type CacheStatus } from './shared-response';
import { classifyUpstreamError, UpstreamTimeout } from './upstream-errors';

const CIRCUIT_GAUGE: Record<CircuitState, number> = { closed: 0, 'half-open': 1, open: 2 };

type UpstreamMethod = 'GET' | 'HEAD' | 'POST';

export interface ForwarderDeps {
  config: GatewayConfig;
  budgets: UpstreamBudgets;
  metrics: GatewayMetrics;
  logger: Logger;
  now?: () => number;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** What an upstream answer delivers: its start (status, headers, flow control), then its body. */
interface UpstreamSink {
  onStart(head: UpstreamHead): void;
  onData(chunk: Buffer): void;
  onEnd(): void;
  onError(err: Error): void;
}

interface UpstreamHead {
  statusCode: number;
  headers: IncomingHttpHeaders;
  pause(): void;
  resume(): void;
}

/**
 * One upstream call through undici's handler API: `sink.onStart` when status and headers are in (the promise then
 * resolves), then the body into `sink`; an error before the start rejects the promise. Aborting `signal` aborts the
 * call at any stage, also while it waits in the pool for a connection (undici starts a request only once a connection
 * is free, and takes no abort before that): the promise rejects at once, and the request is dropped when its turn
 * comes. (Not `pool.request()`: its body stream and promise chain keep about 1.5 KB per request alive across a
 * young-generation collection, which at 1,000 requests/s per process meant a mark-compact pause every 1.5 s;
 * docs/benchmarks.md, gateway.)
 */
function dispatchUpstream(
  pool: Pool,
  options: Dispatcher.DispatchOptions,
  signal: AbortSignal,
  sink: UpstreamSink,
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    let started = false;
    let controller: Dispatcher.DispatchController | undefined;
    const onAbort = () => {
      if (controller) controller.abort(signal.reason as Error);
      else reject(signal.reason as Error); // still queued: onRequestStart drops it
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const done = () => signal.removeEventListener('abort', onAbort);
    pool.dispatch(options, {
      onRequestStart(c) {
        controller = c;
        if (signal.aborted) c.abort(signal.reason as Error);
      },
      onResponseStart(c, statusCode, headers) {
        started = true;
        resolve(); // first: whatever onStart does, the call is no longer waiting
        sink.onStart({ statusCode, headers, pause: () => c.pause(), resume: () => c.resume() });
      },
      onResponseData(_c, chunk) {
        sink.onData(chunk);
      },
      onResponseEnd() {
        done();
        sink.onEnd();
      },
      onResponseError(_c, err) {
        done();
        if (started) sink.onError(err);
        else reject(err);
      },
    });
  });
}

/**
 * Sends routed requests upstream and delivers the answers: micro-cache first (opt-in routes), then joining an
 * identical call already in flight, else a new call that passes the target's circuit and budget, is signed, and
 * is streamed back through a SharedResponse. Everything here is built once at start-up.
 */
export class Forwarder {
  private readonly pools = new Map<string, Pool>();
  private readonly circuits = new Map<string, Circuit>();
  private readonly inflight = new Map<string, SharedResponse>();
  readonly cache: MicroCache;
  private readonly cacheRules: CacheRules;
  private readonly now: () => number;

  constructor(private readonly deps: ForwarderDeps) {
    this.cache = new MicroCache(deps.config.CACHE_MAX_BYTES);
    this.cacheRules = new CacheRules(deps.config.cacheRules);
    this.now = deps.now ?? Date.now;
  }

  private pool(target: UpstreamTarget): Pool {
    let pool = this.pools.get(target.id);
    if (!pool) {
      const { config } = this.deps;
      pool = new Pool(target.origin, {
        connections: config.UPSTREAM_CONNECTIONS,
        pipelining: 1,
        keepAliveTimeout: 4_000,
        keepAliveMaxTimeout: 60_000,
        headersTimeout: config.UPSTREAM_TIMEOUT_MS,
        bodyTimeout: config.UPSTREAM_BODY_TIMEOUT_MS,
        connect: {
          timeout: config.UPSTREAM_CONNECT_TIMEOUT_MS,
          ...(target.tls ? { ca: target.tls.ca, rejectUnauthorized: target.tls.verify } : {}),
        },
      });
      this.pools.set(target.id, pool);
    }
    return pool;
  }

  circuit(target: UpstreamTarget): Circuit {
    let circuit = this.circuits.get(target.id);
    if (!circuit) {
      const gauge = this.deps.metrics.circuitState;
      circuit = new Circuit(this.deps.config.CIRCUIT_FAILURE_THRESHOLD, this.deps.config.CIRCUIT_OPEN_MS, (state) => {
        gauge.set({ target: target.id }, CIRCUIT_GAUGE[state]);
        this.deps.logger.warn({ target: target.id, state }, 'upstream circuit changed state');
      });
      gauge.set({ target: target.id }, 0);
      this.circuits.set(target.id, circuit);
    }
    return circuit;
  }

  /**
   * Answers one caller request that has passed authentication, rate limits and routing: a GET or HEAD, or (with its
   * checked `body`) a POST to one of the platform's read-only POST routes. POSTs share calls and cache entries only
   * with identical bodies.
   */
  forward(
    req: IncomingMessage,
    res: ServerResponse,
    platform: Platform,
    route: Route,
    resource: readonly string[],
    body?: RequestBody,
  ): void {
    const { config, metrics } = this.deps;
    const method: UpstreamMethod = body ? 'POST' : req.method === 'HEAD' ? 'HEAD' : 'GET';
    const shareable = !isConditional(req.headers);
    let key = `${method} ${route.target.id} ${route.path}?${route.query} ${varyKey(req.headers)}`;
    if (body) key += ` ${body.digest}`;
    const ttlMs = method !== 'HEAD' && shareable ? this.cacheRules.ttlFor(platform.key, resource) : 0;
    if (ttlMs > 0) {
      const hit = this.cache.get(key, this.now(), acceptableAgeMs(req.headers['cache-control']));
      if (hit) {
        this.serveCached(res, hit, method);
        this.count(platform.key, 'HIT', req);
        return;
      }
    }
    if (config.COALESCE && shareable) {
      const running = this.inflight.get(key);
      if (running?.joinable) {
        running.join(res, 'COALESCED');
        this.count(platform.key, 'COALESCED', req);
        return;
      }
    }
    const shared = new SharedResponse(config.MAX_SHARED_BODY_BYTES, config.UPSTREAM_BODY_TIMEOUT_MS, () => {
      if (this.inflight.get(key) === shared) this.inflight.delete(key);
      metrics.inflight.dec();
    });
    metrics.inflight.inc();
    if (config.COALESCE && shareable) this.inflight.set(key, shared);
    shared.join(res, 'MISS');
    this.count(platform.key, 'MISS', req);
    void this.call(shared, req.headers, method, platform, route, body, (answer) => {
      if (ttlMs <= 0) return;
      const ttl = storableTtl(ttlMs, answer.headers['cache-control']);
      if (ttl > 0 && answer.status === 200) {
        const now = this.now();
        this.cache.set(key, { ...answer, storedAt: now, expiresAt: now + ttl });
      }
    });
  }

  private count(platform: string, result: CacheStatus, req: IncomingMessage): void {
    this.deps.metrics.cache.inc({ platform, result });
    req.cacheStatus = result;
  }

  private serveCached(res: ServerResponse, entry: CachedResponse, method: UpstreamMethod): void {
    const ageMs = Math.max(0, this.now() - entry.storedAt);
    res.writeHead(entry.status, {
      ...entry.headers,
      'x-cache': 'HIT',
      age: String(Math.floor(ageMs / 1000)),
      'x-cache-age-ms': String(ageMs),
    });
    res.end(method === 'HEAD' ? undefined : entry.body);
  }

  private async call(
    shared: SharedResponse,
    incoming: IncomingHttpHeaders,
    method: UpstreamMethod,
    platform: Platform,
    route: Route,
    body: RequestBody | undefined,
    store: (answer: NonNullable<ReturnType<SharedResponse['completeBody']>>) => void,
  ): Promise<void> {
    const { config, metrics, budgets } = this.deps;
    const { target } = route;
    const circuit = this.circuit(target);
    const signal = shared.abort.signal;
    let verdict = false;
    let status = 0;
    try {
      if (!circuit.allow(this.now())) {
        const retry = Math.max(1, Math.ceil(circuit.retryAfterMs(this.now()) / 1000));
        throw new AppError('upstream_unavailable', `${platform.title} is failing; requests are paused for ${retry} s`, {
          headers: { 'Retry-After': String(retry) },
        });
      }
      if (target.budget) {
        const decision = await budgets.take(target.origin, target.budget);
        if (!decision.allowed) {
          metrics.budgetRejections.inc({ platform: platform.key });
          const retry = Math.max(1, Math.ceil(decision.waitUs / 1_000_000));
          throw new AppError(
            'upstream_rate_limited',
            `The upstream budget of ${platform.title} (${target.budget.perSecond} requests/s) is exhausted; retry in ${retry} s`,
            { headers: { 'Retry-After': String(retry) } },
          );
        }
        if (decision.waitUs > 0) {
          metrics.budgetWaits.inc({ platform: platform.key });
          await sleep(decision.waitUs / 1000, signal);
        }
      }
      const path = `${target.basePath}${route.path}`;
      const headers = upstreamRequestHeaders(incoming);
      if (body) headers['content-type'] = body.contentType;
      if (route.sign && target.signer) {
        Object.assign(
          headers,
          await target.signer.sign(
            { method, path, query: route.query, body: body?.text ?? '', host: target.host },
            this.now(),
          ),
        );
      }
      const started = performance.now();
      const timer = setTimeout(
        () => shared.abort.abort(new UpstreamTimeout(config.UPSTREAM_TIMEOUT_MS)),
        config.UPSTREAM_TIMEOUT_MS,
      );
      try {
        await dispatchUpstream(
          this.pool(target),
          { path: route.query === '' ? path : `${path}?${route.query}`, method, headers, body: body?.bytes },
          signal,
          {
            // Synchronous with the response's start, so the caller's response exists before the first chunk.
            onStart: (response) => {
              clearTimeout(timer);
              metrics.upstreamDuration.observe({ platform: platform.key }, (performance.now() - started) / 1000);
              metrics.upstreamRequests.inc({
                platform: platform.key,
                target: target.id,
                outcome: `${Math.floor(response.statusCode / 100)}xx`,
              });
              verdict = true;
              status = response.statusCode;
              // A 5xx is a failure at once; anything else succeeds only once its body has arrived whole.
              if (status >= 500) circuit.failure(this.now());
              shared.pause = response.pause;
              shared.resume = response.resume;
              shared.respond(response.statusCode, callerResponseHeaders(response.headers));
            },
            onData: (chunk) => shared.data(chunk),
            onError: (err) => {
              if (signal.aborted) {
                if (status < 500) circuit.release(); // every caller left: no verdict on the upstream
              } else {
                this.deps.logger.warn({ target: target.id, err: { message: err.message } }, 'upstream body failed');
                // A truncated or stalled body is an upstream failure like a refused connection.
                if (status < 500) circuit.failure(this.now());
              }
              shared.fail({ code: 'bad_gateway', message: `Upstream ${target.host} cut the response short` });
            },
            onEnd: () => {
              if (status < 500) circuit.success();
              shared.end();
              const complete = shared.completeBody();
              if (complete) store(complete);
            },
          },
        );
      } finally {
        clearTimeout(timer);
      }
    } catch (err) {
      if (err instanceof AppError) {
        if (!verdict) circuit.release();
        shared.fail({ code: err.code, message: err.message, headers: { ...err.headers } });
        return;
      }
      const reason: unknown = signal.aborted ? signal.reason : err;
      if (signal.aborted && !(reason instanceof UpstreamTimeout)) {
        circuit.release(); // every caller left; no verdict on the upstream
        return;
      }
      const classified = classifyUpstreamError(reason, target, config.UPSTREAM_CONNECT_TIMEOUT_MS);
      metrics.upstreamRequests.inc({ platform: platform.key, target: target.id, outcome: classified.outcome });
      if (classified.upstreamFault) circuit.failure(this.now());
      else circuit.release();
      this.deps.logger.warn(
        { target: target.id, err: { message: (reason as Error)?.message, code: (reason as { code?: string })?.code } },
        'upstream call failed',
      );
      shared.fail({ code: classified.code, message: classified.message });
    }
  }

  /**
   * A call of the gateway's own (IBKR session keep-alive): no caller, body discarded; undefined without a budget slot.
   * Aborting `signal` ends it at any stage (the promise rejects).
   */
  async ping(target: UpstreamTarget, method: string, path: string, signal?: AbortSignal): Promise<number | undefined> {
    return (await this.own(target, method, path, '', signal))?.status;
  }

  /**
   * Waits for a slot of `fraction` of the target's budget (UpstreamBudgets.share), granted up to `maxWaitMs` ahead;
   * false at once when none is that near. True at once for a target without a budget. Aborting `signal` ends the
   * wait (the promise rejects with its AbortError).
   */
  async share(target: UpstreamTarget, fraction: number, maxWaitMs: number, signal?: AbortSignal): Promise<boolean> {
    if (!target.budget) return true;
    const slot = await this.deps.budgets.share(target.origin, target.budget, fraction, maxWaitMs);
    if (slot.allowed && slot.waitUs > 0) await delay(slot.waitUs / 1000, undefined, { ref: false, signal });
    return slot.allowed;
  }

  /**
   * A read of the gateway's own (the WebSocket proxy's book reconciliation), no caller: the JSON body of a 200;
   * undefined without a budget slot; any other status, or a failed call, throws. Aborting `signal` ends it at any
   * stage (the promise rejects).
   */
  async readJson(target: UpstreamTarget, path: string, query: string, signal?: AbortSignal): Promise<unknown> {
    const answer = await this.own(target, 'GET', path, query, signal);
    if (answer === undefined) return undefined;
    if (answer.status !== 200) throw new Error(`Upstream ${target.host} answered ${answer.status}`);
    return JSON.parse(answer.body.toString('utf8'));
  }

  /**
   * The status and (for a 200) body of a call of the gateway's own; undefined without a budget slot. A slot granted
   * for later (within UPSTREAM_BUDGET_MAX_WAIT_MS) is waited for and used: it is taken either way. Within
   * UPSTREAM_TIMEOUT_MS, body included, also while it waits for a connection of the pool (dispatchUpstream); aborting
   * `cancel` ends it at any stage.
   */
  private async own(
    target: UpstreamTarget,
    method: string,
    path: string,
    query: string,
    cancel?: AbortSignal,
  ): Promise<{ status: number; body: Buffer } | undefined> {
    cancel?.throwIfAborted(); // before a budget slot is taken
    if (target.budget) {
      const decision = await this.deps.budgets.take(target.origin, target.budget);
      if (!decision.allowed) return undefined;
      if (decision.waitUs > 0) await delay(decision.waitUs / 1000, undefined, { signal: cancel });
    }
    const full = `${target.basePath}${path}`;
    const headers = upstreamRequestHeaders({});
    if (target.signer)
      Object.assign(
        headers,
        await target.signer.sign({ method, path: full, query, body: '', host: target.host }, this.now()),
      );
    const timeout = AbortSignal.timeout(this.deps.config.UPSTREAM_TIMEOUT_MS);
    const signal = cancel ? AbortSignal.any([timeout, cancel]) : timeout;
    let status = 0;
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      dispatchUpstream(
        this.pool(target),
        { path: query === '' ? full : `${full}?${query}`, method: method as Dispatcher.HttpMethod, headers },
        signal,
        {
          onStart: (head) => (status = head.statusCode),
          onData: (chunk) => {
            if (status === 200) chunks.push(chunk);
          },
          onEnd: resolve,
          onError: reject,
        },
      ).catch(reject);
    });
    return { status, body: Buffer.concat(chunks) };
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close().catch(() => p.destroy())));
  }
}
