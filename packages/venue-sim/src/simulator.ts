import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BookEngine } from './book/engine';
import { ControlServer } from './control/control-server';
import { Rng } from './core/rng';
import { createCredentials } from './credentials';
import { type SimFeeds, type SimUrls, writeSecretsAndBuildEnv } from './env';
import type { FeedHub } from './feeds/feed-hub';
import { type PlatformHost, portOffset, resolveHosts } from './hosts';
import { FAULT_KINDS, FaultRegistry, type FaultSpec } from './http/faults';
import { type HostDefinition, HostServer } from './http/host-server';
import { RateLimiter } from './http/rate-limit';
import { RequestLog } from './http/request-log';
import { resolveBookPlatform, resolveOptions, type SimulatorOptions } from './options';
import type { PlatformContext } from './platforms/context';
import { coinbaseHost } from './platforms/coinbase/rest';
import { buildCoinbaseCatalog } from './platforms/coinbase/catalog';
import { buildGeminiCatalog } from './platforms/gemini/catalog';
import { geminiHost } from './platforms/gemini/rest';
import { GEMINI_WS_PATH, GeminiFeed } from './platforms/gemini/ws';
import { buildIbkrCatalog } from './platforms/ibkr/catalog';
import { forecastexHost } from './platforms/ibkr/forecastex';
import { IBKR_PREFIX, ibkrHost } from './platforms/ibkr/portal';
import { IbkrSession } from './platforms/ibkr/session';
import { buildKalshiCatalog } from './platforms/kalshi/catalog';
import { KALSHI_PREFIX, kalshiErrors, kalshiHost } from './platforms/kalshi/rest';
import { KALSHI_WS_PATH, KalshiFeed } from './platforms/kalshi/ws';
import { buildPolymarketCatalog } from './platforms/polymarket/catalog';
import { clobHost } from './platforms/polymarket/clob';
import { dataHost } from './platforms/polymarket/data-api';
import { gammaHost } from './platforms/polymarket/gamma';
import { buildPmUsCatalog } from './platforms/polymarket-us/catalog';
import { pmUsHosts } from './platforms/polymarket-us/rest';
import { PM_US_WS_PATH, PmUsFeed } from './platforms/polymarket-us/ws';
import type { FeedFaultSpec, Simulator } from './types';
import { createBooksApi } from './books-api';
import { SimError } from './errors';

export { SimError } from './errors';

/**
 * Starts every simulated host on 127.0.0.1 and the book processes. Resolves once every server listens.
 *
 * ```ts
 * const sim = await startSimulator({ seed: 7 });
 * await fetch(`${sim.urls.kalshi}/markets`);
 * await sim.stop();
 * ```
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const opts = resolveOptions(options);
  const clock = opts.clock;
  const { credentials, keys } = await createCredentials(opts.credentials);

  const kalshiCat = buildKalshiCatalog(opts.seed, opts.catalogDate, opts.tickers.kalshi);
  const pmUsCat = buildPmUsCatalog(opts.seed, opts.catalogDate, opts.tickers.polymarketUs);
  const geminiCat = buildGeminiCatalog(opts.catalogDate, opts.tickers.gemini);
  const coinbaseCat = buildCoinbaseCatalog(opts.tickers.coinbase);
  const polyCat = buildPolymarketCatalog(opts.seed, opts.catalogDate, opts.tickers.clob);
  const ibkrCat = buildIbkrCatalog(opts.seed, opts.catalogDate);

  const engine = new BookEngine(
    [
      ...kalshiCat.instruments,
      ...pmUsCat.instruments,
      ...geminiCat.instruments,
      ...coinbaseCat.instruments,
      ...polyCat.instruments,
    ],
    {
      seed: opts.seed,
      updatesPerSecond: opts.updatesPerSecond,
      changesPerUpdate: opts.changesPerUpdate,
      moving: opts.moving,
      retentionMs: opts.historyRetentionMs,
      maxRetainedEvents: opts.historyMaxEvents,
      clock,
      startPaused: opts.startPaused,
      onListenerError: (err) => opts.logger?.error({ err }, 'feed listener failed'),
    },
  );

  const ctx: PlatformContext = { opts, engine, credentials, keys, clock };
  const log = new RequestLog(opts.maxRecordedRequests, opts.recordRequests);
  const faults = new FaultRegistry();
  const limiter = new RateLimiter(clock);
  for (const [host, cfg] of Object.entries(opts.rateLimits)) limiter.set(host as PlatformHost, cfg);
  const session = new IbkrSession(opts.ibkrIdleTimeoutMs, clock, new Rng(opts.seed, 'ibkr', 'session').hex(32));

  const kalshi = kalshiHost(ctx, kalshiCat);
  const kalshiFeed = new KalshiFeed(
    engine,
    kalshiCat,
    {
      snapshotFields: opts.assumptions.kalshiSnapshotFields,
      heartbeatIntervalMs: opts.heartbeatIntervalMs,
      verify: kalshi.verify as NonNullable<HostDefinition['verify']>,
      unauthorizedBody: (reason) => String(kalshiErrors.unauthorized(reason).body),
    },
    clock,
  );
  kalshi.upgrade = (req, socket, head, record) => kalshiFeed.upgrade(req, socket, head, record);
  const pmUs = pmUsHosts(ctx, pmUsCat);
  const pmUsFeed = new PmUsFeed(
    engine,
    pmUsCat,
    pmUs.auth.verify as NonNullable<HostDefinition['verify']>,
    opts.heartbeatIntervalMs,
    clock,
  );
  pmUs.auth.upgrade = (req, socket, head, record) => pmUsFeed.upgrade(req, socket, head, record);
  const gemini = geminiHost(ctx, geminiCat);
  const geminiFeed = new GeminiFeed(engine, geminiCat, opts.heartbeatIntervalMs, clock);
  gemini.upgrade = (req, socket, head, record) => geminiFeed.upgrade(req, socket, head, record);

  const definitions: Record<PlatformHost, HostDefinition> = {
    gamma: gammaHost(ctx, polyCat),
    clob: clobHost(ctx, polyCat),
    data: dataHost(ctx, polyCat),
    pmUsPublic: pmUs.pub,
    pmUsAuth: pmUs.auth,
    kalshi,
    gemini,
    coinbase: coinbaseHost(ctx, coinbaseCat),
    ibkrPortal: ibkrHost(ctx, ibkrCat, session),
    forecastex: forecastexHost(ibkrCat),
  };
  const hubs: Record<'kalshi' | 'gemini' | 'polymarketUs', FeedHub> = {
    kalshi: kalshiFeed.hub,
    gemini: geminiFeed.hub,
    polymarketUs: pmUsFeed.hub,
  };
  for (const hub of Object.values(hubs)) hub.maxBufferedBytes = opts.maxFeedBufferBytes;
  for (const [host, def] of Object.entries(definitions) as Array<[PlatformHost, HostDefinition]>) {
    def.edge = opts.edge && host !== 'ibkrPortal';
  }

  const hostCtx = {
    log,
    faults,
    limiter,
    clock,
    onError: (err: unknown) => opts.logger?.error({ err }, 'request failed'),
  };
  const servers = new Map<PlatformHost, HostServer>();
  const ports = {} as Record<PlatformHost | 'control', number>;
  let tmpDir: string | undefined;
  let control: ControlServer | undefined;
  let stopped = false;
  let feedFaultIds = 0;

  const closeAll = async () => {
    engine.stop();
    kalshiFeed.close();
    pmUsFeed.close();
    geminiFeed.close();
    await Promise.all([...servers.values()].map((s) => s.close()));
    await control?.close();
    if (tmpDir) rmSync(tmpDir, { recursive: true, force: true });
  };

  try {
    for (const [host, def] of Object.entries(definitions) as Array<[PlatformHost, HostDefinition]>) {
      const server = new HostServer(def, hostCtx);
      servers.set(host, server);
      ports[host] = await server.listen(opts.basePort ? opts.basePort + portOffset(host) : 0);
    }
  } catch (err) {
    await closeAll();
    throw portError(err, opts.basePort);
  }

  const base = (host: PlatformHost | 'control', scheme = 'http') => `${scheme}://127.0.0.1:${ports[host]}`;
  const feeds: SimFeeds = {
    kalshi: `${base('kalshi', 'ws')}${KALSHI_WS_PATH}`,
    gemini: `${base('gemini', 'ws')}${GEMINI_WS_PATH}`,
    polymarketUs: `${base('pmUsAuth', 'ws')}${PM_US_WS_PATH}`,
  };

  const feedHub = (name: string): FeedHub => {
    const p = resolveBookPlatform(name);
    if (p === 'kalshi' || p === 'gemini' || p === 'polymarketUs') return hubs[p];
    throw new SimError('not_found', `"${name}" has no WebSocket feed (kalshi, gemini, polymarketUs)`);
  };
  const hostsOf = (name: string): readonly PlatformHost[] => {
    const hosts = resolveHosts(name);
    if (!hosts) throw new SimError('not_found', `unknown platform "${name}"`);
    return hosts;
  };

  const sim: Simulator = {
    urls: {} as SimUrls,
    feeds,
    credentials,
    seed: opts.seed,
    env: () => {
      tmpDir ??= mkdtempSync(path.join(os.tmpdir(), 'venue-sim-'));
      return writeSecretsAndBuildEnv(tmpDir, sim.urls, feeds, credentials);
    },
    requests: (filter = {}) =>
      log.list({
        ...(filter.platform !== undefined ? { hosts: hostsOf(filter.platform) } : {}),
        ...(filter.pathPrefix !== undefined ? { pathPrefix: filter.pathPrefix } : {}),
      }),
    clearRequests: () => log.clear(),
    faults: {
      inject: (spec: FaultSpec) => {
        if (!FAULT_KINDS.includes(spec.kind))
          throw new SimError('bad_request', `unknown fault kind "${String(spec.kind)}"`);
        return faults.inject(spec, hostsOf(spec.platform));
      },
      remove: (id) => faults.remove(id),
      clear: () => faults.clear(),
      list: () => faults.list(),
    },
    rateLimits: {
      set: (platform, config) => {
        for (const h of hostsOf(platform)) limiter.set(h, config);
      },
      get: (platform) => limiter.get(hostsOf(platform)[0] as PlatformHost),
    },
    feedFaults: {
      inject: (spec: FeedFaultSpec) => {
        const hub = feedHub(spec.platform);
        switch (spec.kind) {
          case 'drop': {
            const count = spec.count ?? 1;
            return { id: hub.injectDrop(count, spec.ticker), affected: count };
          }
          case 'disconnect':
            return { id: `disconnect-${++feedFaultIds}`, affected: hub.disconnect(spec.ticker) };
          case 'stall':
            return { id: `stall-${++feedFaultIds}`, affected: hub.stall(spec.ms ?? 1000, spec.ticker) };
          default:
            throw new SimError('bad_request', `unknown feed fault kind "${String(spec.kind)}"`);
        }
      },
      dropNext: (platform, o = {}) => feedHub(platform).injectDrop(o.count ?? 1, o.ticker),
      disconnect: (platform, o = {}) => feedHub(platform).disconnect(o.ticker),
      stall: (platform, ms, o = {}) => feedHub(platform).stall(ms, o.ticker),
      clear: () => {
        for (const h of Object.values(hubs)) h.clearFaults();
      },
      stats: (platform) => {
        const hub = feedHub(platform);
        return {
          connections: hub.connections.size,
          pendingDrops: hub.pendingDrops(),
          dropped: hub.dropped,
          slowDisconnects: hub.slowDisconnects,
        };
      },
    },
    books: createBooksApi(engine),
    ibkr: {
      expireSession: () => session.expire(),
      login: () => session.login(),
      isAuthenticated: () => session.isAuthenticated(),
    },
    recordedTickers: () => ({
      venue_b: engine
        .instruments('kalshi')
        .map((i) => i.ticker)
        .sort(),
      venue_c: engine
        .instruments('gemini')
        .map((i) => i.ticker)
        .sort(),
      venue_a_us: engine
        .instruments('polymarketUs')
        .map((i) => i.ticker)
        .sort(),
    }),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      control?.markStopping();
      await closeAll();
    },
  };

  try {
    control = new ControlServer(sim, { logger: opts.logger });
    ports.control = await control.listen(opts.basePort);
  } catch (err) {
    await closeAll();
    throw portError(err, opts.basePort);
  }
  Object.assign(sim.urls, {
    control: base('control'),
    gamma: base('gamma'),
    clob: base('clob'),
    data: base('data'),
    pmUsPublic: base('pmUsPublic'),
    pmUsAuth: base('pmUsAuth'),
    kalshi: `${base('kalshi')}${KALSHI_PREFIX}`,
    gemini: base('gemini'),
    coinbase: base('coinbase'),
    ibkrPortal: `${base('ibkrPortal', 'https')}${IBKR_PREFIX}`,
    forecastex: `${base('forecastex')}/api`,
  } satisfies SimUrls);
  engine.start();
  opts.logger?.info({ urls: sim.urls, seed: opts.seed }, 'venue simulator started');
  return sim;
}

function portError(err: unknown, basePort: number): Error {
  // Duck-typed: errors from Node's core may come from another realm (e.g. under Jest).
  const e = err as { code?: unknown; message?: unknown };
  const message = typeof e?.message === 'string' ? e.message : String(err);
  if (e?.code === 'EADDRINUSE') {
    return new Error(
      `a simulator port is taken (base ${basePort}: ports ${basePort}-${basePort + 10} must be free): ${message}`,
    );
  }
  return err instanceof Error ? err : new Error(message);
}
