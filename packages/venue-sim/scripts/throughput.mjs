#!/usr/bin/env node
// Rough throughput of the simulator (build first: pnpm --filter @depthgate/venue-sim build).
//
//   node packages/venue-sim/scripts/throughput.mjs rest [--seconds 5] [--concurrency 64] [--path /trade-api/v2/exchange/status]
//   node packages/venue-sim/scripts/throughput.mjs feed [--seconds 5] [--ups 20000] [--changes 5] [--platforms venue-b,venue-c,venue-a-us]
//
// The simulator runs in this process, the load generator / feed client in a child process, as they would in a
// benchmark. Figures depend on the machine; docs/benchmarks.md records the ones measured.
import { fork } from 'node:child_process';
import http from 'node:http';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '64' },
    path: { type: 'string', default: '/trade-api/v2/exchange/status' },
    ups: { type: 'string', default: '20000' },
    changes: { type: 'string', default: '5' },
    platforms: { type: 'string', default: 'venue-b,venue-c,venue-a-us' },
    child: { type: 'string' },
  },
});
const seconds = Number(values.seconds);

if (values.child) {
  const job = JSON.parse(values.child);
  if (job.mode === 'rest') await restClient(job);
  else await feedClient(job);
} else {
  const mode = positionals[0] ?? 'rest';
  const { startSimulator, signers } = await import('../dist/index.js');
  if (mode === 'rest') {
    const sim = await startSimulator({ updatesPerSecond: 50, rateLimits: false });
    const base = new URL(sim.urls['venue-b']).origin;
    const result = await runChild({
      mode,
      url: `${base}${values.path}`,
      concurrency: Number(values.concurrency),
      seconds,
    });
    console.log(JSON.stringify({ mode, path: values.path, concurrency: Number(values.concurrency), ...result }));
    await sim.stop();
  } else {
    const sim = await startSimulator({
      updatesPerSecond: Number(values.ups),
      changesPerUpdate: Number(values.changes),
      platforms: values.platforms.split(','),
      rateLimits: false,
    });
    const t = sim.recordedTickers();
    const seqs = () =>
      sim.books
        .platforms()
        .reduce((n, p) => n + sim.books.tickers(p).reduce((m, x) => m + sim.books.last(p, x).seq, 0), 0);
    const job = {
      mode,
      seconds,
      tickers: t,
      feeds: sim.feeds,
      kalshiHeaders: signers.kalshiHeaders(sim.credentials.kalshi, 'GET', '/trade-api/ws/v2'),
      pmHeaders: signers.polymarketUsHeaders(sim.credentials.polymarketUs, 'GET', '/v1/ws/markets'),
    };
    const before = seqs();
    const t0 = Date.now();
    const result = await runChild(job);
    const events = seqs() - before;
    const elapsed = (Date.now() - t0) / 1000;
    console.log(
      JSON.stringify({
        mode,
        updatesPerSecondAsked: Number(values.ups),
        changesPerUpdate: Number(values.changes),
        bookEventsPerSecond: Math.round(events / elapsed),
        ...result,
        simHeapMB: Math.round(process.memoryUsage().heapUsed / 1e6),
      }),
    );
    await sim.stop();
  }
}

function runChild(job) {
  return new Promise((resolve, reject) => {
    const child = fork(new URL(import.meta.url).pathname, ['--child', JSON.stringify(job)], {
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    child.on('message', resolve);
    child.on('error', reject);
  });
}

async function restClient({ url, concurrency, seconds }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  let ok = 0;
  let failed = 0;
  const end = Date.now() + seconds * 1000;
  const one = () =>
    new Promise((resolve) => {
      http
        .get(url, { agent }, (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) ok++;
            else failed++;
            resolve();
          });
        })
        .on('error', () => {
          failed++;
          resolve();
        });
    });
  const loops = Array.from({ length: concurrency }, async () => {
    while (Date.now() < end) await one();
  });
  const t0 = Date.now();
  await Promise.all(loops);
  const elapsed = (Date.now() - t0) / 1000;
  agent.destroy();
  process.send({ requestsPerSecond: Math.round(ok / elapsed), ok, failed });
  process.exit(0);
}

async function feedClient({ seconds, tickers, feeds, kalshiHeaders, pmHeaders }) {
  let messages = 0;
  let changes = 0;
  const open = (url, headers, subscribe) =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers, perMessageDeflate: false });
      ws.on('open', () => {
        ws.send(JSON.stringify(subscribe));
        resolve(ws);
      });
      ws.on('error', reject);
      ws.on('message', (data) => {
        messages++;
        const m = JSON.parse(data);
        if (m.type === 'orderbook_delta') changes++;
        else if (m.type === 'l2_updates') changes += m.changes.length;
        else if (m.marketData) changes += 1; // a whole book; the recorder diffs it
      });
    });
  const sockets = await Promise.all([
    open(feeds['venue-b'], kalshiHeaders, {
      id: 1,
      cmd: 'subscribe',
      params: { channels: ['orderbook_delta'], market_tickers: tickers.venue_b },
    }),
    open(feeds['venue-c'], {}, { type: 'subscribe', subscriptions: [{ name: 'l2', symbols: tickers.venue_c }] }),
    open(feeds['venue-a-us'], pmHeaders, {
      subscribe: {
        requestId: 'bench',
        subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA',
        marketSlugs: tickers.venue_a_us,
      },
    }),
  ]);
  const t0 = Date.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const elapsed = (Date.now() - t0) / 1000;
  for (const ws of sockets) ws.terminate();
  process.send({
    feedMessagesPerSecond: Math.round(messages / elapsed),
    feedLevelChangesPerSecond: Math.round(changes / elapsed),
  });
  process.exit(0);
}
