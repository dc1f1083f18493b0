import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hostId } from '@depthgate/platforms';
import { BookEngine } from './book/engine';
import type { Instrument } from './book/types';
import { ControlServer } from './control/control-server';
import { createCredentials } from './credentials';
import { DEFAULT_PLATFORMS } from './default-topology';
import { type SimCredentialEnv, type SimFeeds, type SimUrls, writeSecretsAndBuildEnv } from './env';
import { FEED_FAULT_KINDS, type FeedHub } from './feeds/feed-hub';
import { FAULT_KINDS, FaultRegistry, type FaultSpec } from './http/faults';
import { type HostDefinition, HostServer } from './http/host-server';
import { RateLimiter } from './http/rate-limit';
import { RequestLog } from './http/request-log';
import type { HostId } from './http/types';
import { resolveOptions, type SimulatorOptions } from './options';
import type { PlatformContext } from './platforms/context';
import type { CatalogContext, SimPlatformInstance, SimSession } from './platforms/platform';
import { Topology } from './topology';
import type { FeedFaultSpec, Simulator } from './types';
import { createBooksApi } from './books-api';
import { SimError } from './errors';

export { SimError } from './errors';

/**
 * Starts every simulated host on 127.0.0.1 and the book processes. Resolves once every server listens.
 *
 * ```ts
 * const sim = await startSimulator({ seed: 7 });
 * await fetch(`${sim.urls['venue-b']}/markets`);
 * await sim.stop();
 * ```
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const topology = new Topology({ ...DEFAULT_PLATFORMS, ...options.extraPlatforms });
  const opts = resolveOptions(options, topology);
  const clock = opts.clock;
  const { credentials, keys } = await createCredentials(opts.credentials);

  // Catalogues first (seeded, some shared): the book engine needs every moving instrument up front.
  const shared = new Map<string, unknown>();
  const catalogCtx: CatalogContext = {
    seed: opts.seed,
    catalogDate: opts.catalogDate,
    tickers: (platform) => {
      const n = opts.tickers[platform];
      if (n === undefined) throw new Error(`${platform} has no moving books (its simulator module declares no book)`);
      return n;
    },
    shared: <T>(name: string, build: () => T): T => {
      if (!shared.has(name)) shared.set(name, build());
      return shared.get(name) as T;
    },
  };
  const catalogs = new Map<string, unknown>();
  const instruments: Instrument[] = [];
  for (const [key, { sim }] of Object.entries(topology.platforms)) {
    const built = sim.catalog?.(catalogCtx);
    catalogs.set(key, built?.catalog);
    instruments.push(...(built?.instruments ?? []));
  }
  const engine = new BookEngine(instruments, {
    seed: opts.seed,
    updatesPerSecond: opts.updatesPerSecond,
    changesPerUpdate: opts.changesPerUpdate,
    moving: opts.moving,
    retentionMs: opts.historyRetentionMs,
    maxRetainedEvents: opts.historyMaxEvents,
    clock,
    startPaused: opts.startPaused,
    onListenerError: (err) => opts.logger?.error({ err }, 'feed listener failed'),
  });

  const ctx: PlatformContext = { opts, engine, credentials, keys, clock };
  const instances = new Map<string, SimPlatformInstance>();
  const definitions = new Map<HostId, HostDefinition>();
  const basePaths = new Map<HostId, string>();
  for (const [key, { descriptor, sim }] of Object.entries(topology.platforms)) {
    const instance = sim.create(ctx, catalogs.get(key));
    instances.set(key, instance);
    for (const name of Object.keys(descriptor.hosts as object)) {
      const host = instance.hosts[name];
      if (!host) throw new Error(`the simulator's module of ${key} has no host "${name}" (its descriptor has)`);
      const { basePath, ...def } = host;
      const id = hostId(key, name);
      definitions.set(id, { ...def, host: id, edge: opts.edge && def.edge !== false });
      basePaths.set(id, basePath ?? '');
    }
    const issued = Object.keys(instance.credentials ?? {}).sort();
    const declared = (sim.signs ?? [])
      .flatMap((g) => (descriptor.credentials as Record<string, { vars: { env: string }[] }>)[g]?.vars ?? [])
      .map((v) => v.env)
      .sort();
    if (issued.join() !== declared.join()) {
      throw new Error(
        `the simulator's module of ${key} issues ${issued.join(', ')} but declares ${declared.join(', ')}`,
      );
    }
  }
  const hubs = new Map<string, FeedHub>();
  for (const [key, instance] of instances) {
    for (const [name, feed] of Object.entries(instance.feeds ?? {})) {
      feed.hub.maxBufferedBytes = opts.maxFeedBufferBytes;
      feed.hub.maxSubscriptions = opts.maxFeedSubscriptions;
      hubs.set(hostId(key, name), feed.hub);
    }
  }

  const log = new RequestLog(opts.maxRecordedRequests, opts.recordRequests);
  const faults = new FaultRegistry();
  const limiter = new RateLimiter(clock);
  for (const [host, cfg] of Object.entries(opts.rateLimits)) limiter.set(host, cfg);
  const hostCtx = {
    log,
    faults,
    limiter,
    clock,
    onError: (err: unknown) => opts.logger?.error({ err }, 'request failed'),
  };
  const servers = new Map<HostId, HostServer>();
  const ports = new Map<HostId | 'control', number>();
  let tmpDir: string | undefined;
  let control: ControlServer | undefined;
  let stopped = false;
  let feedFaultIds = 0;

  const closeAll = async () => {
    engine.stop();
    for (const instance of instances.values()) instance.close?.();
    await Promise.all([...servers.values()].map((s) => s.close()));
    await control?.close();
    if (tmpDir) rmSync(tmpDir, { recursive: true, force: true });
  };

  try {
    for (const [id, def] of definitions) {
      const server = new HostServer(def, hostCtx);
      servers.set(id, server);
      ports.set(id, await server.listen(opts.basePort ? opts.basePort + topology.portOffset(id) : 0));
    }
  } catch (err) {
    await closeAll();
    throw portError(err, opts.basePort, topology.hosts.length);
  }

  const origin = (id: HostId, ws = false) => {
    const scheme = definitions.get(id)?.tls ? 'https' : 'http';
    return `${ws ? scheme.replace('http', 'ws') : scheme}://127.0.0.1:${ports.get(id)}`;
  };
  const urls: Record<string, string> = {};
  for (const id of definitions.keys()) urls[id] = `${origin(id)}${basePaths.get(id) ?? ''}`;
  const feeds: Record<string, string> = {};
  for (const [key, instance] of instances) {
    for (const [name, feed] of Object.entries(instance.feeds ?? {})) {
      feeds[hostId(key, name)] = `${origin(hostId(key, feed.host), true)}${feed.path}`;
    }
  }
  const credentialEnv: SimCredentialEnv = Object.fromEntries(
    [...instances].map(([key, instance]) => [key, instance.credentials ?? {}]),
  );

  const feedHub = (name: string): FeedHub => {
    const key = topology.platformOf(name);
    const hub = key === undefined ? undefined : hubs.get(key);
    if (hub) return hub;
    throw new SimError('not_found', `"${name}" has no WebSocket feed (${[...hubs.keys()].join(', ')})`);
  };
  const hostsOf = (name: string): readonly HostId[] => {
    const hosts = topology.resolveHosts(name);
    if (!hosts) throw new SimError('not_found', `unknown platform "${name}"`);
    return hosts;
  };
  const session = (): SimSession => {
    const s = instances.get('venue-e')?.session;
    if (!s) throw new SimError('not_found', 'no platform with a login session');
    return s;
  };
  const { books, trades } = createBooksApi(engine, topology, (inst, t) =>
    instances.get(inst.platform)?.trade?.(inst, t),
  );
  const bookTickers = (platform: string): string[] =>
    engine
      .instruments(platform)
      .map((i) => i.ticker)
      .sort();

  const sim: Simulator = {
    urls: urls as SimUrls,
    feeds: feeds as SimFeeds,
    credentials,
    seed: opts.seed,
    env: (dir?: string) => {
      if (dir === undefined) {
        tmpDir ??= mkdtempSync(path.join(os.tmpdir(), 'venue-sim-'));
        dir = tmpDir;
      }
      return writeSecretsAndBuildEnv(dir, topology, sim.urls, sim.feeds, credentialEnv);
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
      get: (platform) => limiter.get(hostsOf(platform)[0] as HostId),
    },
    feedFaults: {
      inject: (spec: FeedFaultSpec) => {
        const hub = feedHub(spec.platform);
        if (!(FEED_FAULT_KINDS as readonly string[]).includes(spec.kind))
          throw new SimError('bad_request', `unknown feed fault kind "${String(spec.kind)}"`);
        if (!hub.kinds.includes(spec.kind)) {
          const why =
            spec.kind === 'reorder'
              ? 'its messages carry a sequence number that reveals the order'
              : 'its messages carry no checksum';
          throw new SimError(
            'bad_request',
            `"${spec.kind}" does not apply to the feed of "${spec.platform}": ${why} (it takes ${hub.kinds.join(', ')})`,
          );
        }
        switch (spec.kind) {
          case 'drop':
          case 'reorder':
          case 'corrupt_checksum': {
            const count = spec.count ?? 1;
            return { id: hub.injectFault(spec.kind, count, spec.ticker), affected: count };
          }
          case 'disconnect':
            return { id: `disconnect-${++feedFaultIds}`, affected: hub.disconnect(spec.ticker) };
          case 'stall':
            return { id: `stall-${++feedFaultIds}`, affected: hub.stall(spec.ms ?? 1000, spec.ticker) };
        }
      },
      dropNext: (platform, o = {}) => feedHub(platform).injectDrop(o.count ?? 1, o.ticker),
      disconnect: (platform, o = {}) => feedHub(platform).disconnect(o.ticker),
      stall: (platform, ms, o = {}) => feedHub(platform).stall(ms, o.ticker),
      clear: () => {
        for (const h of hubs.values()) h.clearFaults();
      },
      received: (platform) => [...feedHub(platform).received],
      clearReceived: (platform) => {
        feedHub(platform).clearReceived();
      },
      stats: (platform) => {
        const hub = feedHub(platform);
        return {
          connections: hub.connections.size,
          pendingDrops: hub.pending('drop'),
          pendingReorders: hub.pending('reorder'),
          pendingCorruptions: hub.pending('corrupt_checksum'),
          dropped: hub.dropped,
          reordered: hub.reordered,
          corrupted: hub.corrupted,
          slowDisconnects: hub.slowDisconnects,
          subscriptionRefusals: hub.subscriptionRefusals,
        };
      },
    },
    books,
    trades,
    ibkr: {
      expireSession: () => session().expire(),
      login: () => session().login(),
      isAuthenticated: () => session().isAuthenticated(),
    },
    recordedTickers: () =>
      Object.fromEntries(
        Object.entries(topology.recordedBooks()).map(([exchange, platform]) => [exchange, bookTickers(platform)]),
      ) as ReturnType<Simulator['recordedTickers']>,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      control?.markStopping();
      await closeAll();
    },
  };

  try {
    control = new ControlServer(sim, { logger: opts.logger });
    ports.set('control', await control.listen(opts.basePort));
  } catch (err) {
    await closeAll();
    throw portError(err, opts.basePort, topology.hosts.length);
  }
  urls.control = `http://127.0.0.1:${ports.get('control')}`;
  engine.start();
  opts.logger?.info({ urls: sim.urls, seed: opts.seed }, 'venue simulator started');
  return sim;
}

function portError(err: unknown, basePort: number, hosts: number): Error {
  // Duck-typed: errors from Node's core may come from another realm (e.g. under Jest).
  const e = err as { code?: unknown; message?: unknown };
  const message = typeof e?.message === 'string' ? e.message : String(err);
  if (e?.code === 'EADDRINUSE') {
    return new Error(
      `a simulator port is taken (base ${basePort}: ports ${basePort}-${basePort + hosts} must be free): ${message}`,
    );
  }
  return err instanceof Error ? err : new Error(message);
}
