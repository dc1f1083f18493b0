/**
 * A plain WebSocket bot on the replay of Kalshi's WebSocket (docs/replay.md, "WebSocket replay (Kalshi)"): it talks to
 * the replay exactly as to wss://api.elections.kalshi.com/trade-api/ws/v2 (`subscribe` to `orderbook_delta` and
 * `trade`), keeps the market's YES and NO bids by Kalshi's rules (a snapshot replaces them, a delta adds `delta_fp`),
 * checks that `seq` is contiguous on its `sid`, and counts the trades. At the end (close 1000 "replay finished") it
 * prints its book as JSON: YES bids and NO bids, best first, sizes exact.
 *
 *   DEPTHGATE_KEY=dg_… node services/replay/examples/kalshi.mjs KXBTCD-26MAR0711-T95000 2026-03-07T10:00:00Z 2026-03-07T11:00:00Z
 *
 * REPLAY_URL: the replay service (default ws://127.0.0.1:7083); SPEED: `max` (default), `1` (real time), any factor.
 */
import WebSocket from 'ws';

const [market = 'KXBTCD-26MAR0711-T95000', from, to] = process.argv.slice(2);
const base = process.env.REPLAY_URL ?? 'ws://127.0.0.1:7083';
const query = new URLSearchParams({ from, to, speed: process.env.SPEED ?? 'max' });
const key = process.env.DEPTHGATE_KEY;
const ws = new WebSocket(`${base}/ws/replay/v1/kalshi?${query}`, { headers: key ? { 'X-API-Key': key } : {} });

// Contract counts are decimal text ("763.00"): kept exact as millionths.
const SCALE = 1_000_000n;
const units = (text) => {
  const [whole, frac = ''] = text.replace('-', '').split('.');
  const n = BigInt(whole) * SCALE + BigInt((frac + '000000').slice(0, 6));
  return text.startsWith('-') ? -n : n;
};
const text = (n) => `${n / SCALE}.${String(n % SCALE).padStart(6, '0')}`.replace(/\.?0+$/, '');

let yes;
let no;
let trades = 0;
let snapshots = 0;
const seqs = new Map();

// The bot's live subscribe, unchanged.
ws.on('open', () =>
  ws.send(
    JSON.stringify({
      id: 1,
      cmd: 'subscribe',
      params: { channels: ['orderbook_delta', 'trade'], market_ticker: market },
    }),
  ),
);

ws.on('message', (data) => {
  const m = JSON.parse(String(data));
  if (m.type === 'orderbook_snapshot' || m.type === 'orderbook_delta') {
    const last = seqs.get(m.sid);
    if (last !== undefined && m.seq !== last + 1) throw new Error(`seq ${m.seq} after ${last} on sid ${m.sid}`);
    seqs.set(m.sid, m.seq);
  }
  if (m.type === 'orderbook_snapshot') {
    // The whole book: at the start, and again after a recorded gap.
    const side = (levels) => new Map((levels ?? []).map(([price, count]) => [price, units(count)]));
    yes = side(m.msg.yes_dollars_fp);
    no = side(m.msg.no_dollars_fp);
    snapshots++;
  } else if (m.type === 'orderbook_delta') {
    const book = m.msg.side === 'yes' ? yes : no;
    const count = (book.get(m.msg.price_dollars) ?? 0n) + units(m.msg.delta_fp);
    if (count === 0n) book.delete(m.msg.price_dollars);
    else book.set(m.msg.price_dollars, count);
  } else if (m.type === 'trade') trades++;
  else if (m.type === 'error') console.error(`Kalshi error ${m.msg.code}: ${m.msg.msg}`);
});

ws.on('close', (code, reason) => {
  const best = (levels) =>
    [...(levels ?? [])].sort(([a], [b]) => Number(b) - Number(a)).map(([price, count]) => [price, text(count)]);
  console.log(
    JSON.stringify({
      close: [code, String(reason)],
      yes: best(yes),
      no: best(no),
      trades,
      resets: Math.max(snapshots - 1, 0),
    }),
  );
});
