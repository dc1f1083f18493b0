/**
 * A plain WebSocket bot on the replay of Gemini's market data v2 (docs/replay.md, "WebSocket replay: Gemini"): it
 * talks to the replay exactly as to wss://api.gemini.com/v2/marketdata, keeps the book by Gemini's rules and counts
 * the trades. At the end (close 1000 "replay finished") it prints its book, best first, as JSON.
 *
 *   DEPTHGATE_KEY=dg_… node services/replay/examples/gemini.mjs BTCUSD 2026-03-07T10:00:00Z 2026-03-07T11:00:00Z
 *
 * REPLAY_URL: the replay service (default ws://127.0.0.1:7083); SPEED: `max` (default), `1` (real time), any factor.
 */
import WebSocket from 'ws';

const [symbol = 'BTCUSD', from, to] = process.argv.slice(2);
const base = process.env.REPLAY_URL ?? 'ws://127.0.0.1:7083';
const query = new URLSearchParams({ from, to, speed: process.env.SPEED ?? 'max' });
const key = process.env.DEPTHGATE_KEY;
const ws = new WebSocket(`${base}/ws/replay/v1/gemini?${query}`, { headers: key ? { 'X-API-Key': key } : {} });

const book = { buy: new Map(), sell: new Map() };
let trades = 0;
let resets = -1;

ws.on('open', () => ws.send(JSON.stringify({ type: 'subscribe', subscriptions: [{ name: 'l2', symbols: [symbol] }] })));

ws.on('message', (data) => {
  const m = JSON.parse(String(data));
  if (m.type === 'l2_updates') {
    // The first-message form (with `trades`) is the whole book: at the start, and again after a recorded gap.
    if ('trades' in m) {
      book.buy.clear();
      book.sell.clear();
      resets++;
    }
    for (const [side, price, quantity] of m.changes) {
      if (Number(quantity) === 0) book[side].delete(price);
      else book[side].set(price, quantity);
    }
  } else if (m.type === 'trade') trades++;
  else if (m.type === 'error') console.error(`Gemini error ${m.reason}: ${m.message}`);
});

ws.on('close', (code, reason) => {
  const side = (levels, sign) => [...levels].sort(([a], [b]) => sign * (Number(b) - Number(a)));
  console.log(
    JSON.stringify({
      close: [code, String(reason)],
      bids: side(book.buy, 1),
      asks: side(book.sell, -1),
      trades,
      resets: Math.max(resets, 0),
    }),
  );
});
