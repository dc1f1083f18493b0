// Gateway A/B: two gateway configurations (or builds) under the same paced load in one sitting, so a difference in
// the REST tail can be told from the run-to-run spread.
//
// Usage: ./dev bench gateway --ab 'NAME[@ROOT][:ENV=V,ENV=V…]' 'NAME[@ROOT][:…]' [--launches 3] [--rounds 4]
//        [--seconds 6] [--fractions 0.25,0.5]
//   e.g. ./dev bench gateway --ab 'ws-on' 'ws-off:WS_ENABLED=false'
//        ./dev bench gateway --ab 'main' 'before@/work/wt-base'     (ROOT: another checkout, built)
//        ./dev bench gateway --ab 'default' 'flag:NODE_FLAGS=--no-foo --bar'  (NODE_FLAGS: node/V8 flags, which
//        NODE_OPTIONS does not take)
//
// Why not two runs of run.mjs: a gateway process's tail latency depends on state it keeps for its lifetime (what the
// JIT optimised during its warm-up, how V8 sized its heap), so two launches of the same build differ by a factor of
// two in p99 on this 2-core machine, and whichever variant got more warm-up wins. Here each launch starts both
// variants fresh (two processes each on its own port, as a 2-core host runs it), warms both with the same unpaced
// run (their throughput is the capacity the load is set from: a fraction of their mean), then alternates them round
// by round (ABBA…) at each load; this repeats for several launches, in alternating start order. Reported per variant:
// p99 and p50 (median of all rounds, and each launch's median), CPU time per request and V8 garbage-collection pauses
// per 1,000 requests (from the processes' own --trace-gc), and the ratio of B to A. Then, per launch, the micro-cached
// route of the standard benchmark's (d) (`/products/BTC-USD/book`, unpaced, ABBA rounds): requests/s and CPU per
// request of each variant, so a change to the cached path is measured beside the other build in the same sitting.
import { readFileSync } from 'node:fs';
import { cpuTicks, fmt, freePort, sleep, stopAll, stopSome, tempDir, waitHttp, wrk } from '../lib.mjs';
import { startGateways, startStack } from './stack.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const specs = [];
for (let i = args.indexOf('--ab') + 1; i > 0 && i < args.length && !args[i].startsWith('--'); i++) specs.push(args[i]);
if (specs.length !== 2) {
  console.error("usage: ./dev bench gateway --ab 'NAME[@ROOT][:ENV=V,…]' 'NAME[@ROOT][:ENV=V,…]' [--launches N] …");
  process.exit(2);
}
const LAUNCHES = Number(opt('launches', 3));
const ROUNDS = Number(opt('rounds', 4));
const SECONDS = Number(opt('seconds', 6));
const FRACTIONS = String(opt('fractions', '0.25,0.5')).split(',').map(Number);
const dir = tempDir('gateway-ab');
const log = (...a) => console.error('[ab]', ...a);

/** `NAME[@ROOT][:ENV=V,ENV=V]` → { name, root, env }. */
function parseSpec(spec) {
  const colon = spec.indexOf(':');
  const head = colon < 0 ? spec : spec.slice(0, colon);
  const env = {};
  if (colon >= 0) {
    for (const pair of spec
      .slice(colon + 1)
      .split(',')
      .filter(Boolean)) {
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new Error(`bad variable in '${spec}': ${pair}`);
      env[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
  }
  const [name, root] = head.split('@');
  const nodeFlags = env.NODE_FLAGS ? env.NODE_FLAGS.split(' ').filter(Boolean) : [];
  delete env.NODE_FLAGS;
  return { name, root, env, nodeFlags };
}
const variants = specs.map(parseSpec);
if (variants[0].name === variants[1].name) throw new Error('the two variants need different names');

/** GC pauses in the processes' --trace-gc logs: mark-compacts and total pause (ms) of every collection. */
function gcOf(files) {
  let markCompacts = 0;
  let pauseMs = 0;
  for (const file of files) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const m = /: (Scavenge|Mark-Compact|Mark-sweep)\b.*?MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms/.exec(line);
      if (!m) continue;
      if (m[1] !== 'Scavenge') markCompacts++;
      pauseMs += Number(m[2]);
    }
  }
  return { markCompacts, pauseMs };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const stack = await startStack(dir);
const key = { 'X-API-Key': stack.apiKey };
const url = (port) => `http://127.0.0.1:${port}/api/v1/venue-d/accounts`;
const cachedUrl = (port) => `http://127.0.0.1:${port}/api/v1/venue-d/products/BTC-USD/book`;
/** The cached route's unpaced rounds: requests/s of each round, and CPU ticks and requests in all, per variant. */
const cached = variants.map(() => ({ rps: [], ticks: 0, requests: 0 }));
// results.get(fraction)[variant]: every round's p99 and p50, and each launch's median p99.
const results = new Map(FRACTIONS.map((f) => [f, variants.map(() => ({ p99: [], p50: [], launchP99: [] }))]));
const totals = variants.map(() => ({ ticks: 0, requests: 0, markCompacts: 0, pauseMs: 0 }));
try {
  for (let launch = 0; launch < LAUNCHES; launch++) {
    const order = launch % 2 ? [1, 0] : [0, 1];
    const running = [];
    for (const v of order) {
      const port = await freePort();
      const name = `l${launch}-${variants[v].name}`;
      const pids = startGateways(stack, {
        name,
        port,
        env: { COALESCE: 'false', ...variants[v].env },
        ...(variants[v].root ? { root: variants[v].root } : {}),
        nodeFlags: ['--trace-gc', ...variants[v].nodeFlags],
        logDir: dir,
      });
      running[v] = { port, pids, logs: pids.map((_, i) => `${dir}/${name}-${i}.log`) };
    }
    for (const v of order) await waitHttp(`http://127.0.0.1:${running[v].port}/ready`);
    await sleep(1000); // every process ready, not just the first to answer
    // The same warm-up for both; their throughput sets the load.
    const capacity = [];
    for (const v of order) capacity[v] = wrk(url(running[v].port), { seconds: 3, headers: key }).rps;
    for (const v of [...order].reverse())
      capacity[v] = (capacity[v] + wrk(url(running[v].port), { seconds: 3, headers: key }).rps) / 2;
    const mean = (capacity[0] + capacity[1]) / 2;
    log(`launch ${launch + 1}: capacity ${variants.map((x, v) => `${x.name} ${fmt(capacity[v])}`).join(', ')} req/s`);
    const gcBefore = running.map((r) => gcOf(r.logs));
    for (const fraction of FRACTIONS) {
      const rate = Math.max(100, Math.round(mean * fraction));
      const perLaunch = variants.map(() => []);
      for (let round = 0; round < ROUNDS; round++) {
        for (const v of round % 2 ? [...order].reverse() : order) {
          const before = cpuTicks(running[v].pids);
          const r = wrk(url(running[v].port), { seconds: SECONDS, headers: key, rate });
          if (r.non2xx > 0) throw new Error(`${variants[v].name}: ${r.non2xx} non-2xx answers`);
          totals[v].ticks += cpuTicks(running[v].pids) - before;
          totals[v].requests += r.requests;
          const slot = results.get(fraction)[v];
          slot.p99.push(r.p99);
          slot.p50.push(r.p50);
          perLaunch[v].push(r.p99);
          log(
            `launch ${launch + 1}, ${fraction * 100} % = ${rate} req/s, round ${round + 1}, ${variants[v].name}: p50 ${fmt(r.p50, 2)} ms, p99 ${fmt(r.p99, 2)} ms`,
          );
        }
      }
      variants.forEach((_, v) => results.get(fraction)[v].launchP99.push(median(perLaunch[v])));
    }
    for (const v of order) wrk(cachedUrl(running[v].port), { seconds: 2, headers: key }); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      for (const v of round % 2 ? [...order].reverse() : order) {
        const before = cpuTicks(running[v].pids);
        const r = wrk(cachedUrl(running[v].port), { seconds: SECONDS, headers: key });
        if (r.non2xx > 0) throw new Error(`${variants[v].name}: ${r.non2xx} non-2xx answers on the cached route`);
        cached[v].ticks += cpuTicks(running[v].pids) - before;
        cached[v].requests += r.requests;
        cached[v].rps.push(r.rps);
        log(`launch ${launch + 1}, cached route, round ${round + 1}, ${variants[v].name}: ${fmt(r.rps)} req/s`);
      }
    }
    running.forEach((r, v) => {
      const after = gcOf(r.logs);
      totals[v].markCompacts += after.markCompacts - gcBefore[v].markCompacts;
      totals[v].pauseMs += after.pauseMs - gcBefore[v].pauseMs;
    });
    await stopSome(running.flatMap((r) => r.pids));
  }

  const lines = [
    `Gateway A/B (${new Date().toISOString()}, ${process.version}): ${LAUNCHES} launches × ${ROUNDS} alternating rounds of ${SECONDS} s per load, wrk -t1 -c64 paced, /api/v1/venue-d/accounts (key check, Redis rate limit, HMAC signing, COALESCE=false), 2 processes per variant`,
    `A = ${specs[0]}, B = ${specs[1]}`,
    '',
    "| load (of the variants' mean unpaced throughput) | A p50 / p99 ms | B p50 / p99 ms | B/A p99 | p99 per launch, A | p99 per launch, B |",
    '| --- | ---: | ---: | ---: | --- | --- |',
    ...FRACTIONS.map((f) => {
      const [ra, rb] = results.get(f);
      return `| ${f * 100} % | ${fmt(median(ra.p50), 2)} / ${fmt(median(ra.p99), 2)} | ${fmt(median(rb.p50), 2)} / ${fmt(median(rb.p99), 2)} | **${fmt(median(rb.p99) / median(ra.p99), 2)}** | ${ra.launchP99.map((x) => fmt(x, 2)).join(', ')} | ${rb.launchP99.map((x) => fmt(x, 2)).join(', ')} |`;
    }),
    '',
    '| during the paced rounds | A | B | B/A |',
    '| --- | ---: | ---: | ---: |',
    `| CPU per request (µs, both processes) | ${fmt((totals[0].ticks * 1e4) / totals[0].requests, 1)} | ${fmt((totals[1].ticks * 1e4) / totals[1].requests, 1)} | ${fmt(totals[1].ticks / totals[1].requests / (totals[0].ticks / totals[0].requests), 2)} |`,
    `| GC pause per 1,000 requests (ms) | ${fmt((totals[0].pauseMs * 1e3) / totals[0].requests, 2)} | ${fmt((totals[1].pauseMs * 1e3) / totals[1].requests, 2)} | ${fmt(totals[1].pauseMs / totals[1].requests / (totals[0].pauseMs / totals[0].requests), 2)} |`,
    `| mark-compacts per 10,000 requests | ${fmt((totals[0].markCompacts * 1e4) / totals[0].requests, 2)} | ${fmt((totals[1].markCompacts * 1e4) / totals[1].requests, 2)} | |`,
    '',
    '| the cached route (d), unpaced, wrk -t1 -c64 | A | B | B/A |',
    '| --- | ---: | ---: | ---: |',
    `| requests/s, median of ${LAUNCHES * ROUNDS} rounds | ${fmt(median(cached[0].rps))} | ${fmt(median(cached[1].rps))} | **${fmt(median(cached[1].rps) / median(cached[0].rps), 2)}** |`,
    `| CPU per request (µs, both processes) | ${fmt((cached[0].ticks * 1e4) / cached[0].requests, 1)} | ${fmt((cached[1].ticks * 1e4) / cached[1].requests, 1)} | ${fmt(cached[1].ticks / cached[1].requests / (cached[0].ticks / cached[0].requests), 2)} |`,
  ];
  console.log(lines.join('\n'));
} finally {
  await stopAll();
  stack.stop();
  console.error(`[ab] logs in ${dir}`);
}
