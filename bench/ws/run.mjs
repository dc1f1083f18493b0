// WebSocket proxy benchmark: in one run, on this machine, against the venue simulator as the upstream (Kalshi's
// `orderbook_delta`, one market, one change per event (a few carry two): every change is one message per client,
// re-framed per client with its own sid and seq, directly by the simulator and through the gateway alike):
//   (1) capacity: the event rate the simulator sustains to 1,000 direct clients, found by stepping the rate up until
//       it no longer delivers everything promptly; the runs below use that rate (a load set from this run's
//       measured capacity, never a fixed one);
//   (2) fan-out: 1,000 clients on that one market, directly and through the gateway (one upstream subscription):
//       messages delivered per second and latency (venue event time `ts_ms` to receipt) p50/p99 of each;
//   (3) memory: the gateway's RSS and heap per idle client and per subscribed client (1,000 of each; measured
//       first, on the fresh gateway);
//   (4) sharing: 100 clients on the same 20 books: the upstream subscriptions the gateway holds.
// Usage: ./dev bench ws [--clients N] [--seconds N] [--rate N: no ramp, this rate]
// (writes nothing into the repository; prints a Markdown report on stdout, progress on stderr)
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
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
  sampleRss,
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
const CLIENTS = arg('--clients', 1000);
const SECONDS = arg('--seconds', 10);
/** Skips the capacity ramp and uses this rate (events per second on the market). */
const FIXED_RATE = arg('--rate', 0);
const dir = tempDir('ws');
/** The benchmark's Redis (stopped at the end). */
let redis;
const log = (...a) => console.error('[bench]', ...a);
const require = createRequire(import.meta.url);
const { kalshiSigner, feedHandshakeHeaders } = require(path.join(ROOT, 'packages/platforms/dist/index.js'));

/** Counts messages and samples latency (every 10th client) from the `ts_ms` every Kalshi delta carries. */
class Clients {
  constructor() {
    this.sockets = [];
    this.received = 0;
    this.latencies = [];
    this.closed = 0;
    this.closeCodes = {};
  }

  async open(n, url, headers, onEach) {
    for (let i = 0; i < n; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, n - i) }, (_, j) => this.openOne(url, headers(), i + j, onEach)),
      );
    }
  }

  openOne(url, headers, index, onEach) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers, perMessageDeflate: false, skipUTF8Validation: true });
      const sample = index % 10 === 0;
      ws.on('message', (data) => {
        this.received++;
        if (!sample) return;
        const text = data.toString();
        const at = text.lastIndexOf('"ts_ms":');
        if (at >= 0) this.latencies.push(Date.now() - Number.parseInt(text.slice(at + 8), 10));
      });
      ws.once('open', () => {
        this.sockets.push(ws);
        onEach?.(ws);
        resolve();
      });
      ws.once('close', (code) => {
        this.closed++;
        this.closeCodes[code] = (this.closeCodes[code] ?? 0) + 1;
      });
      ws.once('error', reject);
    });
  }

  reset() {
    this.received = 0;
    this.latencies = [];
  }

  async close() {
    await Promise.all(
      this.sockets.map(
        (ws) =>
          new Promise((resolve) => {
            if (ws.readyState === WebSocket.CLOSED) return resolve();
            ws.once('close', resolve);
            ws.terminate();
          }),
      ),
    );
    this.sockets = [];
  }
}

async function metric(url, name, labels = {}) {
  const text = await (await fetch(url)).text();
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text
    .split('\n')
    .find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && want.every((w) => l.includes(w)));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : NaN;
}

async function main() {
  log(
    `load before: ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  // --- Redis, simulator ---------------------------------------------------------------------------------------
  redis = await startRedis(dir);
  const redisUrl = redis.url;
  const sim = await startSim(
    dir,
    [
      ...['--tickers', 'kalshi=20', '--platforms', 'kalshi', '--updates-per-second', '0', '--changes-per-update', '1'],
      ...['--max-recorded-requests', '1000', '--log-level', 'warn'],
    ],
    { env: { NODE_OPTIONS: '--max-semi-space-size=16' } },
  );
  const { control, env: simEnv } = sim;
  const tickers = (await (await fetch(`${control}/control/tickers`)).json()).venue_b;
  const market = tickers[0];
  const setRate = (updatesPerSecond) =>
    fetch(`${control}/control/books/rate`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ updatesPerSecond }),
    });
  // One change per event: every event of the measured market is one message to each of its clients.
  const feed = simEnv.FEED_VENUE_B_URL;
  const signer = kalshiSigner(
    {
      accessKey: simEnv.KALSHI_ACCESS_KEY,
      privateKeyPem: readFileSync(simEnv.KALSHI_PRIVATE_KEY_FILE, 'utf8'),
    },
    { reuseMs: 0 },
  );
  const subscribe = (markets) =>
    JSON.stringify({ id: 1, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: markets } });

  // --- the gateway -------------------------------------------------------------------------------------------
  // Requests per minute without a limit that matters: each WebSocket handshake counts as a request of the key.
  const key = createKey(redisUrl, [
    '--requests-per-minute',
    '100000000',
    '--ws-max-connections',
    '100000',
    '--ws-max-subscriptions',
    '1000000',
  ]);
  const gatewayPort = await freePort();
  const gateway = start('gateway', process.execPath, [path.join(ROOT, 'services/gateway/dist/main.js')], {
    logDir: dir,
    env: {
      ...simEnv,
      REDIS_URL: redisUrl,
      GATEWAY_PORT: String(gatewayPort),
      LOG_LEVEL: 'warn',
      UPSTREAM_BUDGETS: 'venue-b=0',
      IBKR_TICKLE_INTERVAL_MS: '0',
      WS_MAX_CONNECTIONS: '100000',
      // As deployed (infra/k8s/base/gateway/deployment.yaml).
      NODE_OPTIONS: `--max-old-space-size=384 --max-semi-space-size=8${process.env.DG_BENCH_GATEWAY_NODE_OPTIONS ? ` ${process.env.DG_BENCH_GATEWAY_NODE_OPTIONS}` : ''}`,
    },
  });
  const gw = `http://127.0.0.1:${gatewayPort}`;
  await waitHttp(`${gw}/health`);
  const metrics = `${gw}/metrics`;
  const gwUrl = `ws://127.0.0.1:${gatewayPort}/ws/v1/kalshi`;
  const direct = () => feedHandshakeHeaders(signer, feed, Date.now());
  const viaGateway = () => ({ 'X-API-Key': key });
  const sendSubscribe = (markets) => (ws) => ws.send(subscribe(markets));

  /** A book's events from `t0` to `t1` and the changes they carried (each one `orderbook_delta`). */
  const eventsBetween = async (ticker, t0, t1) => {
    const { events } = await (await fetch(`${control}/control/books/kalshi/${ticker}/events?since=${t0}`)).json();
    const inWindow = events.filter((e) => e.ts >= t0 && e.ts < t1);
    return { events: inWindow.length, deltas: inWindow.reduce((n, e) => n + e.changes.length, 0) };
  };
  /**
   * Delivery over `seconds` with the market moving `rate` events/s (the 20 books share the simulator's rate, so it is
   * set to 20 × rate; what the market really got is read from the simulator's event history): messages per second
   * received, the share of what was offered (each event's changes are one `orderbook_delta` each, times the clients),
   * latency.
   */
  async function measure(clients, rate, seconds) {
    await setRate(rate * tickers.length);
    await sleep(1000);
    clients.reset();
    const t0 = Date.now();
    await sleep(seconds * 1000);
    const received = clients.received;
    const latencies = clients.latencies;
    const t1 = Date.now();
    await setRate(0);
    const elapsed = (t1 - t0) / 1000;
    const { events, deltas } = await eventsBetween(market, t0, t1);
    // The simulator spreads its rate over the 20 books at random: whether it kept up is read from all of them.
    let all = 0;
    for (const t of tickers) all += t === market ? events : (await eventsBetween(t, t0, t1)).events;
    return {
      rate,
      produced: all / (elapsed * rate * tickers.length),
      events: events / elapsed,
      perSecond: received / elapsed,
      share: received / (deltas * clients.sockets.length),
      p50: pct(latencies, 50),
      p99: pct(latencies, 99),
    };
  }

  // --- (3) memory per idle and per subscribed client (measured first) ---------------------------------------
  // On a fresh gateway with the market still; each figure is the least of five readings 500 ms apart (the heap
  // between collections holds garbage that is no one's).
  const mem = async () => {
    const readings = [];
    for (let i = 0; i < 5; i++) {
      if (i > 0) await sleep(500);
      readings.push({
        rss: await metric(metrics, 'process_resident_memory_bytes'),
        heap: await metric(metrics, 'nodejs_heap_size_used_bytes'),
      });
    }
    return { rss: Math.min(...readings.map((r) => r.rss)), heap: Math.min(...readings.map((r) => r.heap)) };
  };
  await sleep(1000);
  const base = await mem();
  const idle = new Clients();
  await idle.open(CLIENTS, gwUrl, viaGateway);
  await sleep(3000);
  const withIdle = await mem();
  for (const ws of idle.sockets) ws.send(subscribe([market]));
  await sleep(3000);
  const withSubs = await mem();
  await idle.close();
  await sleep(1000);

  // --- (1) capacity: the simulator to CLIENTS direct clients ---------------------------------------------------
  log(`opening ${CLIENTS} direct clients`);
  const directClients = new Clients();
  await directClients.open(CLIENTS, feed, direct, sendSubscribe([market]));
  await sleep(1000);
  const ramp = [];
  let sustained;
  // Sustained: the simulator produced ≥ 95 % of the requested events over its 20 books (it skips what it is late
  // for), the clients got ≥ 95 % of what the market's events carried, with p99 ≤ 250 ms.
  for (const rate of FIXED_RATE ? [] : [25, 50, 75, 100, 150, 200, 300, 400, 600, 800, 1200, 1600]) {
    const r = await measure(directClients, rate, 3);
    ramp.push(r);
    log(
      `capacity: ${rate} events/s requested, ${fmt(r.produced * 100, 1)} % produced (${fmt(r.events)} on the market) → ${fmt(r.perSecond)} msg/s (${fmt(r.share * 100, 1)} %), p99 ${fmt(r.p99)} ms`,
    );
    if (r.produced < 0.95 || r.share < 0.95 || r.p99 > 250) break;
    sustained = r;
  }
  const rate = FIXED_RATE || (sustained?.rate ?? 25);

  // --- (2) fan-out at half that rate and at that rate: directly, then through the gateway ----------------------
  // At the simulator's ceiling the load generator and the simulator already use both cores; the gateway is a third
  // process on them, so that run also measures who gets the CPU. Half the ceiling leaves room for the extra hop.
  const rates = [...new Set([Math.max(1, Math.floor(rate / 2)), rate])];
  const directRuns = [];
  for (const r of rates) {
    directRuns.push(await measure(directClients, r, SECONDS));
    const d = directRuns.at(-1);
    log(`direct @${r}: ${fmt(d.perSecond)} msg/s, p50 ${fmt(d.p50, 1)} ms, p99 ${fmt(d.p99, 1)} ms`);
  }
  await directClients.close();
  await sleep(1000);

  const rss = sampleRss(gateway.pid);
  const gwClients = new Clients();
  await gwClients.open(CLIENTS, gwUrl, viaGateway, sendSubscribe([market]));
  await sleep(2000);
  const gatewayRuns = [];
  const upstreamOfRun = await metric(metrics, 'gateway_ws_upstream_subscriptions', { platform: 'venue-b' });
  for (const r of rates) {
    const before = gwClients.closed;
    gatewayRuns.push({ ...(await measure(gwClients, r, SECONDS)), cut: gwClients.closed - before });
    const g = gatewayRuns.at(-1);
    log(`gateway @${r}: ${fmt(g.perSecond)} msg/s, p50 ${fmt(g.p50, 1)} ms, p99 ${fmt(g.p99, 1)} ms, cut ${g.cut}`);
  }
  const peakRss = rss.stop();
  await gwClients.close();
  await sleep(2000);

  // --- (4) 100 clients on the same 20 books ----------------------------------------------------------------------
  const sharing = new Clients();
  await sharing.open(100, gwUrl, viaGateway, sendSubscribe(tickers.slice(0, 20)));
  await sleep(3000);
  const shared = {
    subscriptions: await metric(metrics, 'gateway_ws_subscriptions', { platform: 'venue-b' }),
    upstream: await metric(metrics, 'gateway_ws_upstream_subscriptions', { platform: 'venue-b' }),
    upstreamConnections: await metric(metrics, 'gateway_ws_upstream_connections', { platform: 'venue-b' }),
    simConnections: (await (await fetch(`${control}/control/feed-faults/venue-b`)).json()).connections,
  };
  await sharing.close();

  // --- report ----------------------------------------------------------------------------------------------------
  const loadAfter = os.loadavg();
  const perClient = (a, b) => ((b - a) / CLIENTS / 1024).toFixed(1);
  console.log(`### WebSocket proxy (${CLIENTS} clients, ${SECONDS} s per run)\n`);
  console.log(
    `Node ${process.version}; ${os.cpus().length} CPUs; load average after: ${loadAfter.map((x) => x.toFixed(2)).join(' ')}.\n`,
  );
  console.log(
    '| capacity ramp: events/s requested | produced (all 20 books) | events/s on the market | messages/s delivered to all direct clients | share delivered | p99 ms |',
  );
  console.log('| ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const r of ramp)
    console.log(
      `| ${r.rate} | ${fmt(r.produced * 100, 1)} % | ${fmt(r.events)} | ${fmt(r.perSecond)} | ${fmt(r.share * 100, 1)} % | ${fmt(r.p99, 1)} |`,
    );
  console.log(
    `\nRate used below: **${rate} events/s** (the highest the simulator produced and delivered in full, p99 ≤ 250 ms).\n`,
  );
  console.log(
    '| fan-out, one market, one message per event and client | events/s | messages/s delivered | p50 ms | p99 ms | clients cut |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const [i, r] of rates.entries()) {
    const d = directRuns[i];
    const g = gatewayRuns[i];
    console.log(
      `| simulator → ${CLIENTS} clients directly | ${fmt(d.events)} | ${fmt(d.perSecond)} | ${fmt(d.p50, 1)} | ${fmt(d.p99, 1)} | |`,
    );
    console.log(
      `| simulator → gateway (1 upstream subscription) → ${CLIENTS} clients | ${fmt(g.events)} | ${fmt(g.perSecond)} | ${fmt(g.p50, 1)} | ${fmt(g.p99, 1)} | ${g.cut} |`,
    );
    console.log(
      `| ↳ at ${r === rate ? 'the ceiling' : 'half the ceiling'} (${r}/s requested): gateway **${fmt(g.perSecond / d.perSecond, 2)}×** direct, added p50 ${fmt(g.p50 - d.p50, 1)} ms, added p99 **${fmt(g.p99 - d.p99, 1)} ms** | | | | | |`,
    );
  }
  console.log(
    `\nTarget: ≥ 0.5× the direct delivery. Upstream subscriptions during the runs: ${upstreamOfRun}; gateway peak RSS ${fmt(peakRss, 1)} MiB.\n`,
  );
  console.log('| gateway memory | RSS | heap used |');
  console.log('| --- | ---: | ---: |');
  console.log(
    `| per idle client (${CLIENTS} connected) | ${perClient(base.rss, withIdle.rss)} KiB | ${perClient(base.heap, withIdle.heap)} KiB |`,
  );
  console.log(
    `| per subscribed client (the same, each subscribed to the market) | ${perClient(base.rss, withSubs.rss)} KiB | ${perClient(base.heap, withSubs.heap)} KiB |`,
  );
  console.log(
    `| subscription alone (subscribed − idle) | ${perClient(withIdle.rss, withSubs.rss)} KiB | ${perClient(withIdle.heap, withSubs.heap)} KiB |`,
  );
  console.log(
    `\n100 clients × the same 20 books: client subscriptions ${shared.subscriptions}, **upstream subscriptions ${shared.upstream}** ` +
      `(not ${shared.subscriptions}), on ${shared.upstreamConnections} upstream connection(s); the simulator saw ${shared.simConnections} connection(s).`,
  );
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
