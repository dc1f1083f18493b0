// Silence detection of the gateway's WebSocket proxy (issue 27, "Measured"): how long after an upstream feed goes
// silent its clients get the gateway's `stale` notice. Against the venue simulator, every platform with a WebSocket
// feed at once, each at its venue's own heartbeat rhythm (the simulator's defaults, the descriptors'), the gateway
// with its per-venue thresholds (WS_UPSTREAM_STALL_MS unset): per platform, CLIENTS clients on one moving market;
// STALLS times, the simulator's stall fault (`POST /control/feed-faults`, kind `stall`, longer than the threshold)
// on the platform's feed, then the time from the fault's start to each client's `stale`, and the wait for its
// `resynced` before the next stall. Reported beside each venue's heartbeat interval + 1 s (the target).
// Usage: ./dev bench ws --silence [--stalls N] [--clients N]   (or, after a build: node bench/ws/silence.mjs …)
// (writes nothing into the repository; prints a Markdown report on stdout, progress on stderr)
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import {
  ROOT,
  cleanup,
  createKey,
  fmt,
  freePort,
  pct,
  sleep,
  start,
  startRedis,
  startSim,
  stopAll,
  tempDir,
  waitHttp,
} from '../lib.mjs';

const args = process.argv.slice(2);
const arg = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const STALLS = arg('--stalls', 5);
const CLIENTS = arg('--clients', 5);
const dir = tempDir('ws-silence');
/** The benchmark's Redis (stopped at the end). */
let redis;
const log = (...a) => console.error('[bench]', ...a);
const require = createRequire(import.meta.url);
const { PLATFORMS, feedLiveness } = require(path.join(ROOT, 'packages/platforms/dist/index.js'));

/** Each platform: its book platform in the simulator, the gateway's path, a subscribe, and where its notice is. */
const CASES = [
  {
    platform: 'venue-b',
    path: '/ws/v1/kalshi',
    subscribe: (t) => ({ id: 1, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: [t] } }),
    notice: (m) => (m.type === 'depthgate_notice' ? m.msg : undefined),
  },
  {
    platform: 'venue-a-clob',
    path: '/ws/v1/polymarket-clob/ws/market',
    subscribe: (a) => ({ assets_ids: [a], type: 'market' }),
    notice: (m) => (m.event_type === 'depthgate_notice' ? m : undefined),
  },
  {
    platform: 'venue-a-us',
    path: '/ws/v1/venue-a-us',
    subscribe: (slug) => ({
      subscribe: { requestId: 'md-1', subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA', marketSlugs: [slug] },
    }),
    notice: (m) => m.depthgateNotice,
  },
  {
    platform: 'venue-c',
    path: '/ws/v1/gemini/v2/marketdata',
    subscribe: (s) => ({ type: 'subscribe', subscriptions: [{ name: 'l2', symbols: [s] }] }),
    notice: (m) => (m.type === 'depthgate_notice' ? m : undefined),
  },
  {
    platform: 'venue-d',
    path: '/ws/v1/coinbase',
    subscribe: (p) => ({ type: 'subscribe', product_ids: [p], channels: ['level2'] }),
    notice: (m) => (m.type === 'depthgate_notice' ? m : undefined),
  },
];

/** A client that notes when each notice arrived. */
function client(url, key, subscribe) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { 'X-API-Key': key }, perMessageDeflate: false });
    const c = { ws, notices: [], messages: 0 };
    ws.on('message', (data) => {
      const at = Date.now();
      c.messages++;
      let m;
      try {
        m = JSON.parse(String(data));
      } catch {
        return;
      }
      const n = Array.isArray(m) ? undefined : c.notice?.(m);
      if (n) c.notices.push({ notice: n.notice, reason: n.reason, at });
    });
    ws.once('open', () => {
      ws.send(JSON.stringify(subscribe));
      resolve(c);
    });
    ws.once('error', reject);
  });
}

async function until(f, what, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!f()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function main() {
  const loadBefore = os.loadavg();
  log(`load before: ${loadBefore.map((x) => x.toFixed(2)).join(' ')}`);
  redis = await startRedis(dir);
  const redisUrl = redis.url;
  // Each venue's own heartbeat rhythm (no --heartbeat-interval-ms); the books move, as a live market's do.
  const sim = await startSim(dir, [
    '--updates-per-second',
    '50',
    '--max-recorded-requests',
    '1000',
    '--log-level',
    'warn',
  ]);
  const { control, env: simEnv } = sim;
  const books = await (await fetch(`${control}/control/books`)).json();
  // Requests per minute without a limit that matters: each WebSocket handshake counts as a request of the key.
  const key = createKey(redisUrl, [
    '--requests-per-minute',
    '100000000',
    '--ws-max-connections',
    '1000',
    '--ws-max-subscriptions',
    '1000',
  ]);
  const gatewayPort = await freePort();
  start('gateway', process.execPath, [path.join(ROOT, 'services/gateway/dist/main.js')], {
    logDir: dir,
    env: {
      ...simEnv,
      REDIS_URL: redisUrl,
      GATEWAY_PORT: String(gatewayPort),
      LOG_LEVEL: 'warn',
      IBKR_TICKLE_INTERVAL_MS: '0',
      // The venues' thresholds (the descriptors'), and no REST reconciliation: it would find a stalled book first.
      WS_UPSTREAM_STALL_MS: '',
      WS_RECONCILE_INTERVAL_MS: '0',
    },
  });
  await waitHttp(`http://127.0.0.1:${gatewayPort}/health`);

  // Per platform, concurrently: CLIENTS clients on its first market, then STALLS stalls one after the other.
  const results = await Promise.all(
    CASES.map(async (c) => {
      const descriptor = PLATFORMS[c.platform];
      const live = feedLiveness(descriptor, { stallMs: undefined, pingMs: 10_000 });
      const market = (books[c.platform] ?? [])[0];
      const clients = [];
      for (let i = 0; i < CLIENTS; i++) {
        const x = await client(`ws://127.0.0.1:${gatewayPort}${c.path}`, key, c.subscribe(market));
        x.notice = c.notice;
        clients.push(x);
      }
      await until(() => clients.every((x) => x.messages > 0), `${c.platform}: the first books`, 30_000);
      await sleep(1000);
      const latencies = [];
      let missed = 0;
      for (let s = 0; s < STALLS; s++) {
        const seen = clients.map((x) => x.notices.length);
        const t0 = Date.now();
        const r = await fetch(`${control}/control/feed-faults`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ platform: c.platform, kind: 'stall', ms: live.stallMs + 3_000 }),
        });
        if (r.status !== 201) throw new Error(`${c.platform}: the stall fault was refused (${r.status})`);
        const bound = live.stallMs + 20_000;
        try {
          await until(
            () => clients.every((x, i) => x.notices.slice(seen[i]).some((n) => n.notice === 'resynced')),
            `${c.platform}: stale … resynced`,
            bound,
          );
        } catch (err) {
          log(String(err));
        }
        for (const [i, x] of clients.entries()) {
          const stale = x.notices.slice(seen[i]).find((n) => n.notice === 'stale');
          if (stale) latencies.push(stale.at - t0);
          else missed++;
        }
        log(`${c.platform}: stall ${s + 1}/${STALLS}, stale after ${fmt(latencies.at(-1))} ms`);
        await sleep(3_500); // the stalled connection's backlog and the fault's end behind us
      }
      for (const x of clients) x.ws.terminate();
      return { c, descriptor, live, latencies, missed };
    }),
  );

  const loadAfter = os.loadavg();
  console.log(`### Silence detection (${STALLS} stalls × ${CLIENTS} clients per platform)\n`);
  console.log(
    `Node ${process.version}; ${os.cpus().length} CPUs; load average before ${loadBefore.map((x) => x.toFixed(2)).join(' ')}, after ${loadAfter.map((x) => x.toFixed(2)).join(' ')}.\n`,
  );
  console.log(
    '| platform | heartbeat | threshold | target (heartbeat + 1 s) | stall → `stale` p50 | p99 | max | clients not told | within target |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
  for (const r of results) {
    const target = r.live.heartbeatMs + 1000;
    const p99 = pct(r.latencies, 99);
    console.log(
      `| \`${r.c.platform}\` (${r.descriptor.title}) | ${fmt(r.live.heartbeatMs)} ms | ${fmt(r.live.stallMs)} ms | ${fmt(target)} ms | ${fmt(pct(r.latencies, 50))} ms | ${fmt(p99)} ms | ${fmt(Math.max(...r.latencies))} ms | ${r.missed} | ${r.missed === 0 && p99 <= target ? 'yes' : '**no**'} |`,
    );
  }
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(async () => {
    await stopAll();
    redis?.stop();
    if (!process.env.DG_BENCH_KEEP) cleanup(dir);
  });
