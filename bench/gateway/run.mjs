// Gateway benchmark: in one run, on this machine, against the venue simulator as the upstream:
//   (a) the upstream directly, (b) nginx proxying the same upstream, (c) the gateway with auth, Redis rate limiting
//   and request signing, (d) the gateway on a micro-cached route; p50/p99 at 25 % and 50 % of the throughput nginx
//   reached in (b) in this same run (a vs c: loads set from this machine's measured capacity, never fixed ones);
//   and the polling scenario (50 clients polling 20 order books every 100 ms through a 20 req/s upstream budget).
//   (e) is Node's floor: a bare proxy on Node's HTTP server and undici (bench/gateway/bare-proxy.mjs) in the same
//   throughput and latency runs, so what Node costs and what the gateway adds to it are told apart.
// Usage: ./dev bench gateway [--seconds N]   (writes nothing into the repository; prints a Markdown report)
import { createHmac } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { request, Agent } from 'undici';
import { ROOT, cpuTicks, fmt, freePort, sampleRss, sleep, start, stopAll, tempDir, waitHttp, wrk } from '../lib.mjs';
import { gatewayEnv, startGateways, startStack } from './stack.mjs';

const args = process.argv.slice(2);
const SECONDS = Number(args[args.indexOf('--seconds') + 1] || 10) || 10;
const dir = tempDir('gateway');
const log = (...a) => console.error('[bench]', ...a);
let stopStack = () => {};

async function main() {
  // --- Redis, simulator, nginx -------------------------------------------------------------------------------
  const stack = await startStack(dir);
  const { simEnv, simBase, redisUrl, apiKey } = stack;
  stopStack = stack.stop;
  const coinbase = simEnv.UPSTREAM_VENUE_D_URL;
  const coinbasePort = new URL(coinbase).port;

  const nginxPort = await freePort();
  writeFileSync(
    path.join(dir, 'nginx.conf'),
    `worker_processes auto;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log ${dir}/nginx-access.log combined buffer=64k flush=1s;
  upstream sim { server 127.0.0.1:${coinbasePort}; keepalive 64; }
  server {
    listen 127.0.0.1:${nginxPort};
    location / { proxy_pass http://sim; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
`,
  );
  const nginx = start('nginx', 'nginx', ['-c', path.join(dir, 'nginx.conf'), '-p', dir, '-g', 'daemon off;'], {
    logDir: dir,
  });

  // --- the gateway under test --------------------------------------------------------------------------------
  // Identical concurrent GETs would be coalesced into fewer upstream calls, which measures coalescing rather than
  // the proxy: (c) and the latency runs use a gateway with COALESCE=false; a second one, as deployed, shows what
  // coalescing adds to the same load. Each is two processes on one port, as a 2-core host runs it; nginx runs
  // `worker_processes auto` for the same reason.
  const PROCESSES = 2;
  const gatewayPort = await freePort();
  const coalescingPort = await freePort();
  const gatewayPids = startGateways(stack, {
    name: 'gateway',
    port: gatewayPort,
    processes: PROCESSES,
    env: { COALESCE: 'false' },
    logDir: dir,
  });
  startGateways(stack, {
    name: 'gateway-coalescing',
    port: coalescingPort,
    processes: PROCESSES,
    env: { ACCESS_LOG: 'false' },
    logDir: dir,
  });
  // (e) Node's floor, two processes on one port as the gateway's.
  const barePort = await freePort();
  const barePids = Array.from(
    { length: PROCESSES },
    (_, i) =>
      start(`bare-proxy-${i}`, process.execPath, [path.join(ROOT, 'bench/gateway/bare-proxy.mjs')], {
        env: { BARE_PORT: String(barePort), BARE_UPSTREAM: coinbase, NODE_OPTIONS: gatewayEnv(stack, 0).NODE_OPTIONS },
        logDir: dir,
      }).pid,
  );
  await waitHttp(`http://127.0.0.1:${gatewayPort}/ready`);
  await waitHttp(`http://127.0.0.1:${coalescingPort}/ready`);
  await waitHttp(`http://127.0.0.1:${barePort}/time`);
  await waitHttp(`http://127.0.0.1:${nginxPort}/time`);
  await sleep(1000); // every process ready, not just the first to answer
  const rss = gatewayPids.map((pid) => sampleRss(pid));

  // Coinbase HMAC headers for the direct and nginx runs, signed as the gateway signs (valid ±30 s).
  const secret = readFileSync(simEnv.COINBASE_API_SECRET_FILE, 'utf8').trim();
  const passphrase = readFileSync(simEnv.COINBASE_API_PASSPHRASE_FILE, 'utf8').trim();
  const signed = () => {
    const ts = Math.floor(Date.now() / 1000);
    return {
      'CB-ACCESS-KEY': simEnv.COINBASE_API_KEY,
      'CB-ACCESS-SIGN': createHmac('sha256', Buffer.from(secret, 'base64'))
        .update(`${ts}GET/accounts`)
        .digest('base64'),
      'CB-ACCESS-TIMESTAMP': String(ts),
      'CB-ACCESS-PASSPHRASE': passphrase,
    };
  };
  const key = { 'X-API-Key': apiKey };
  // The proxy's own CPU per request (µs, all its processes), from /proc over the measured run.
  const run = (label, url, headers, pids = []) => {
    wrk(url, { seconds: 2, headers: headers() }); // warm-up
    const before = cpuTicks(pids);
    const r = wrk(url, { seconds: SECONDS, headers: headers() });
    r.cpuUs = pids.length > 0 ? ((cpuTicks(pids) - before) * 1e4) / r.requests : NaN;
    log(
      `${label}: ${fmt(r.rps)} req/s, p50 ${fmt(r.p50, 2)} ms, p99 ${fmt(r.p99, 2)} ms, CPU ${fmt(r.cpuUs, 1)} µs/request, non-2xx ${r.non2xx} ${r.errors}`,
    );
    if (r.non2xx > 0) throw new Error(`${label}: ${r.non2xx} non-2xx answers`);
    return r;
  };

  // --- throughput at 64 connections ----------------------------------------------------------------------------
  const results = {};
  results.a = run('(a) upstream directly   /accounts', `${coinbase}/accounts`, signed);
  results.b = run('(b) nginx → upstream    /accounts', `http://127.0.0.1:${nginxPort}/accounts`, signed, [nginx.pid]);
  results.c = run(
    '(c) gateway, signed     /accounts',
    `http://127.0.0.1:${gatewayPort}/api/v1/venue-d/accounts`,
    () => key,
    gatewayPids,
  );
  results.e = run('(e) bare Node proxy     /accounts', `http://127.0.0.1:${barePort}/accounts`, signed, barePids);
  results.cc = run(
    '(c) + coalescing        /accounts',
    `http://127.0.0.1:${coalescingPort}/api/v1/venue-d/accounts`,
    () => key,
  );
  results.bBook = run(
    '(b) nginx → upstream    /products/BTC-USD/book',
    `http://127.0.0.1:${nginxPort}/products/BTC-USD/book`,
    () => ({}),
  );
  results.d = run(
    '(d) gateway, cached     /products/BTC-USD/book',
    `http://127.0.0.1:${gatewayPort}/api/v1/venue-d/products/BTC-USD/book`,
    () => key,
  );

  // --- added latency at loads set from the capacity measured above -----------------------------------------------
  // wrk paced (bench/gateway/paced.lua) at 25 % and 50 % of what nginx reached in (b): the same fraction of capacity
  // on any machine (a fixed 2,000 req/s was 16 % of one machine and 43 % of another). Three alternating rounds per
  // load after a warm-up, median reported; the generator is C, so its own pauses are not in the figures.
  const loads = [0.25, 0.5].map((fraction) => ({
    fraction,
    rate: Math.max(100, Math.round(results.b.rps * fraction)),
  }));
  const paced = (url, headers, rate) => wrk(url, { seconds: SECONDS, headers, rate });
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const latencies = [];
  for (const { fraction, rate } of loads) {
    wrk(`${coinbase}/accounts`, { seconds: 2, headers: signed(), rate });
    wrk(`http://127.0.0.1:${gatewayPort}/api/v1/venue-d/accounts`, { seconds: 2, headers: key, rate });
    wrk(`http://127.0.0.1:${barePort}/accounts`, { seconds: 2, headers: signed(), rate });
    const rounds = [];
    for (let round = 0; round < 3; round++) {
      const direct = paced(`${coinbase}/accounts`, signed(), rate);
      const through = paced(`http://127.0.0.1:${gatewayPort}/api/v1/venue-d/accounts`, key, rate);
      const bare = paced(`http://127.0.0.1:${barePort}/accounts`, signed(), rate);
      rounds.push({ direct, through, bare });
      log(
        `${rate} req/s (${fraction * 100} % of nginx) round ${round + 1}: direct p99 ${fmt(direct.p99, 2)} ms, gateway p99 ${fmt(through.p99, 2)} ms, bare Node proxy p99 ${fmt(bare.p99, 2)} ms`,
      );
    }
    const of = (k) => ({ p50: median(rounds.map((r) => r[k].p50)), p99: median(rounds.map((r) => r[k].p99)) });
    latencies.push({
      fraction,
      rate,
      direct: of('direct'),
      gateway: of('through'),
      bare: of('bare'),
      rounds: rounds.map((r) => fmt(r.through.p99 - r.direct.p99, 2)).join(', '),
      bareRounds: rounds.map((r) => fmt(r.bare.p99 - r.direct.p99, 2)).join(', '),
    });
  }

  // --- polling: 50 clients, 20 books, every 100 ms, through Kalshi's 20 req/s budget ----------------------------
  const pollPort = await freePort();
  const poller = start('gateway-polling', process.execPath, [path.join(ROOT, 'services/gateway/dist/main.js')], {
    env: {
      ...simEnv,
      REDIS_URL: redisUrl,
      GATEWAY_PORT: String(pollPort),
      LOG_LEVEL: 'warn',
      // The default Kalshi budget (19/s, burst 1: never more than 20 in any second) stays in force.
      CACHE_ROUTES: 'venue-b:/markets/*/orderbook=1100,venue-b:/markets/orderbooks=200',
      IBKR_TICKLE_INTERVAL_MS: '0',
    },
    logDir: dir,
  });
  await waitHttp(`http://127.0.0.1:${pollPort}/ready`);
  const pollRss = sampleRss(poller.pid);
  const control = `http://127.0.0.1:${simBase}`;
  await fetch(`${control}/control/rate-limits/kalshi`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ limit: 20, windowMs: 1000 }),
  });
  const tickers = (await (await fetch(`${control}/control/tickers`)).json()).venue_b.slice(0, 20);
  const polling = {};
  for (const variant of ['per-book', 'batch']) {
    await fetch(`${control}/control/requests`, { method: 'DELETE' });
    const agent = new Agent({ connections: 64 });
    const records = [];
    const until = performance.now() + SECONDS * 1000;
    await Promise.all(
      Array.from({ length: 50 }, async (_, client) => {
        for (let tick = 0; performance.now() < until; tick++) {
          const due = performance.now() + 100;
          const path =
            variant === 'batch'
              ? `/api/v1/venue-b/markets/orderbooks?tickers=${tickers.join(',')}`
              : `/api/v1/venue-b/markets/${tickers[(client + tick) % tickers.length]}/orderbook`;
          try {
            const res = await request(`http://127.0.0.1:${pollPort}${path}`, { dispatcher: agent, headers: key });
            await res.body.dump();
            records.push({
              client,
              status: res.statusCode,
              cache: res.headers['x-cache'],
              age: Number(res.headers['x-cache-age-ms'] ?? 0),
            });
          } catch {
            records.push({ client, status: 0, cache: 'ERROR', age: NaN });
          }
          const rest = due - performance.now();
          if (rest > 0) await sleep(rest);
        }
      }),
    );
    await agent.close();
    const upstream = (await (await fetch(`${control}/control/requests?platform=kalshi`)).json()).requests;
    const ages = records
      .filter((r) => r.status === 200)
      .map((r) => r.age)
      .sort((x, y) => x - y);
    const served = new Set(records.filter((r) => r.status === 200).map((r) => r.client)).size;
    polling[variant] = {
      requests: records.length,
      ok: records.filter((r) => r.status === 200).length,
      failed: records.filter((r) => r.status !== 200).length,
      clientsServed: served,
      upstreamCalls: upstream.length,
      upstream429: upstream.filter((r) => r.status === 429).length,
      upstreamPerSecond: upstream.length / SECONDS,
      ageP99: ages[Math.floor(ages.length * 0.99)] ?? NaN,
      ageMax: ages.at(-1) ?? NaN,
    };
    log(`polling ${variant}: ${JSON.stringify(polling[variant])}`);
  }
  const peakRss = Math.max(...rss.map((r) => r.stop()));
  const peakPollRss = pollRss.stop();

  // --- report ----------------------------------------------------------------------------------------------------
  const ratio = (x, y) => fmt(x / y, 2);
  const lines = [
    `Gateway benchmark (${SECONDS} s per run, wrk -t1 -c64; gateway: ${PROCESSES} processes on one port, nginx: worker_processes auto; ${new Date().toISOString()}; ${process.version})`,
    '',
    '| configuration | requests/s | p50 ms | p99 ms | vs nginx | target | proxy CPU µs/request |',
    '| --- | ---: | ---: | ---: | ---: | --- | ---: |',
    `| (a) upstream directly, /accounts (pre-signed) | ${fmt(results.a.rps)} | ${fmt(results.a.p50, 2)} | ${fmt(results.a.p99, 2)} | ${ratio(results.a.rps, results.b.rps)} | | |`,
    `| (b) nginx → upstream, /accounts (pre-signed) | ${fmt(results.b.rps)} | ${fmt(results.b.p50, 2)} | ${fmt(results.b.p99, 2)} | 1.00 | anchor | ${fmt(results.b.cpuUs, 1)} |`,
    `| (c) gateway: key auth + Redis rate limit + HMAC signing, /accounts, coalescing off | ${fmt(results.c.rps)} | ${fmt(results.c.p50, 2)} | ${fmt(results.c.p99, 2)} | **${ratio(results.c.rps, results.b.rps)}** | ≥ 0.35 | ${fmt(results.c.cpuUs, 1)} |`,
    `| (e) Node's floor: a bare proxy on node:http + undici, nothing else (pre-signed) | ${fmt(results.e.rps)} | ${fmt(results.e.p50, 2)} | ${fmt(results.e.p99, 2)} | ${ratio(results.e.rps, results.b.rps)} | | ${fmt(results.e.cpuUs, 1)} |`,
    `| (c) as deployed: the same with coalescing on (64 identical concurrent GETs share upstream calls) | ${fmt(results.cc.rps)} | ${fmt(results.cc.p50, 2)} | ${fmt(results.cc.p99, 2)} | ${ratio(results.cc.rps, results.b.rps)} | | |`,
    `| (b') nginx → upstream, /products/BTC-USD/book | ${fmt(results.bBook.rps)} | ${fmt(results.bBook.p50, 2)} | ${fmt(results.bBook.p99, 2)} | 1.00 | anchor | |`,
    `| (d) gateway, micro-cached /products/BTC-USD/book | ${fmt(results.d.rps)} | ${fmt(results.d.p50, 2)} | ${fmt(results.d.p99, 2)} | **${ratio(results.d.rps, results.bBook.rps)}** | ≥ 1.0 | |`,
    '',
    'Added latency, /accounts, coalescing off, wrk paced at a fraction of what nginx reached in (b) above (median of 3 rounds):',
    '',
    '| load | upstream directly p50 / p99 ms | through the gateway p50 / p99 ms | added p99 ms (rounds) | target | (e) bare Node proxy p50 / p99 ms | (e) added p99 ms (rounds) |',
    '| --- | ---: | ---: | ---: | --- | ---: | ---: |',
    ...latencies.map(
      (l) =>
        `| ${l.fraction * 100} % of nginx = ${l.rate} req/s | ${fmt(l.direct.p50, 2)} / ${fmt(l.direct.p99, 2)} | ${fmt(l.gateway.p50, 2)} / ${fmt(l.gateway.p99, 2)} | **${fmt(l.gateway.p99 - l.direct.p99, 2)}** (${l.rounds}) | ≤ 5 | ${fmt(l.bare.p50, 2)} / ${fmt(l.bare.p99, 2)} | ${fmt(l.bare.p99 - l.direct.p99, 2)} (${l.bareRounds}) |`,
    ),
    '',
    '| polling: 50 clients × 20 books every 100 ms, Kalshi budget 20 req/s | requests | answered 200 | clients served | upstream calls/s | upstream 429s | data age p99 / max (ms) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...Object.entries(polling).map(
      ([v, p]) =>
        `| ${v === 'batch' ? 'one batch URL (`/markets/orderbooks?tickers=…`), cached 200 ms' : 'a URL per book (`/markets/{t}/orderbook`), cached 1,100 ms'} | ${p.requests} | ${p.ok} | ${p.clientsServed}/50 | ${fmt(p.upstreamPerSecond, 1)} | ${p.upstream429} | ${fmt(p.ageP99)} / ${fmt(p.ageMax)} |`,
    ),
    '',
    `Gateway peak RSS per process: ${fmt(peakRss, 1)} MiB during (c), (d) and the latency runs (${PROCESSES} processes); ${fmt(peakPollRss, 1)} MiB in the polling runs (target < 200 MiB).`,
  ];
  console.log(lines.join('\n'));
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(async () => {
    await stopAll();
    stopStack();
    console.error(`[bench] logs in ${dir}`);
  });
