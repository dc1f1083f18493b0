// The replay load of the isolation measurement, a process of its own started by run.mjs under `nice` with an IPC
// channel (the replays' clients stand for backtests running elsewhere: they share neither a process nor a priority
// with the history's clients): `replays` WebSocket replays at speed=max kept running at once — each starts the next
// window as soon as its replay finishes — until the parent says `stop`. Sends { started } once every replay has
// received its first message, and { messages, replays, failures, why, seconds } when stopped, then exits.
import { performance } from 'node:perf_hooks';
import { wsReplay } from './clients.mjs';
import { venueNamed } from './venues.mjs';

const { base, venueName, key, windows, replays } = JSON.parse(process.argv[2]);
const parentPort = { postMessage: (m) => process.send(m) };
/** Why replays failed: `code reason` (or the error's message) → count. */
const why = new Map();
const venue = venueNamed(venueName);
let stopping = false;
let messages = 0;
let finished = 0;
let failures = 0;
let firstMessages = 0;
let measuredFrom = 0;
const open = new Set();

async function loop(i) {
  let first = true;
  for (let n = i; !stopping; n += replays) {
    const w = windows[n % windows.length];
    try {
      const r = await wsReplay({
        base,
        venue,
        ticker: w.ticker,
        window: w,
        speed: 'max',
        key,
        onSocket: (ws) => {
          open.add(ws);
          ws.once('close', () => open.delete(ws));
        },
        onMessage: () => {
          messages++;
          if (first) {
            first = false;
            if (++firstMessages === replays) {
              measuredFrom = performance.now();
              messages = 0;
              parentPort.postMessage({ started: true });
            }
          }
        },
      });
      if (!stopping && r.code === 1000) finished++;
      else if (!stopping) {
        failures++;
        why.set(`${r.code} ${r.reason}`, (why.get(`${r.code} ${r.reason}`) ?? 0) + 1);
      }
    } catch (err) {
      if (!stopping) {
        failures++;
        why.set(err.message, (why.get(err.message) ?? 0) + 1);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const loops = Array.from({ length: replays }, (_, i) => loop(i));
process.on('message', async (m) => {
  if (m !== 'stop') return;
  const seconds = (performance.now() - measuredFrom) / 1000;
  const counted = messages;
  stopping = true;
  for (const ws of open) ws.terminate();
  await Promise.allSettled(loops);
  process.send({ messages: counted, replays: finished, failures, why: Object.fromEntries(why), seconds }, () =>
    process.exit(0),
  );
});
