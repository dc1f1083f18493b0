/**
 * A plain WebSocket bot on the replay of the Coinbase Exchange feed (docs/replay.md, "WebSocket replay: Coinbase"): it
 * talks to the replay exactly as to wss://ws-feed.exchange.coinbase.com (level2 and matches), keeps the book by
 * Coinbase's rules and counts the matches. At the end (close 1000 "replay finished") it prints its book, best first,
 * as JSON.
 *
 *   DEPTHGATE_KEY=dg_… node services/replay/examples/coinbase.mjs BTC-USD 2026-03-07T10:00:00Z 2026-03-07T11:00:00Z
 *
 * REPLAY_URL: the replay service (default ws://127.0.0.1:7083); SPEED: `max` (default), `1` (real time), any factor.
 */
import WebSocket from 'ws';

const [product = 'BTC-USD', from, to] = process.argv.slice(2);
const base = process.env.REPLAY_URL ?? 'ws://127.0.0.1:7083';
const query = new URLSearchParams({ from, to, speed: process.env.SPEED ?? 'max' });
const key = process.env.DEPTHGATE_KEY;
const ws = new WebSocket(`${base}/ws/replay/v1/coinbase?${query}`, { headers: key ? { 'X-API-Key': key } : {} });

let book;
let matches = 0;
let snapshots = 0;

// The bot's live subscribe, unchanged: level2's signature fields may stay (the replay ignores them).
ws.on('open', () =>
  ws.send(JSON.stringify({ type: 'subscribe', product_ids: [product], channels: ['level2', 'matches'] })),
);

ws.on('message', (data) => {
  const m = JSON.parse(String(data));
  if (m.type === 'snapshot') {
    // The whole book: at the start, and again after a recorded gap.
    book = { buy: new Map(m.bids), sell: new Map(m.asks) };
    snapshots++;
  } else if (m.type === 'l2update') {
    for (const [side, price, size] of m.changes) {
      if (Number(size) === 0) book[side].delete(price);
      else book[side].set(price, size);
    }
  } else if (m.type === 'match') matches++;
  else if (m.type === 'error') console.error(`Coinbase error: ${m.message}: ${m.reason}`);
});

ws.on('close', (code, reason) => {
  const side = (levels, sign) => [...(levels ?? [])].sort(([a], [b]) => sign * (Number(b) - Number(a)));
  console.log(
    JSON.stringify({
      close: [code, String(reason)],
      bids: side(book?.buy, 1),
      asks: side(book?.sell, -1),
      trades: matches,
      resets: Math.max(snapshots - 1, 0),
    }),
  );
});
