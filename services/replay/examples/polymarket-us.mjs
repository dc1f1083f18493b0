/**
 * A plain WebSocket bot on the replay of Polymarket US's markets WebSocket (docs/replay.md, "WebSocket replay
 * (Polymarket US)"): it talks to the replay exactly as to wss://api.polymarket.us/v1/ws/markets (a MARKET_DATA and a
 * TRADE subscription), keeps the market's book (every MARKET_DATA message is the whole book) and counts the trades. At
 * the end (close 1000 "replay finished") it prints its book, best first, as JSON.
 *
 *   DEPTHGATE_KEY=dg_… node services/replay/examples/polymarket-us.mjs <market slug> 2026-03-07T10:00:00Z 2026-03-07T11:00:00Z
 *
 * REPLAY_URL: the replay service (default ws://127.0.0.1:7083); SPEED: `max` (default), `1` (real time), any factor.
 */
import WebSocket from 'ws';

const [slug, from, to] = process.argv.slice(2);
const base = process.env.REPLAY_URL ?? 'ws://127.0.0.1:7083';
const query = new URLSearchParams({ from, to, speed: process.env.SPEED ?? 'max' });
const key = process.env.DEPTHGATE_KEY;
const ws = new WebSocket(`${base}/ws/replay/v1/polymarket-us?${query}`, { headers: key ? { 'X-API-Key': key } : {} });

let book = { bids: [], asks: [] };
let trades = 0;

ws.on('open', () => {
  for (const [requestId, subscriptionType] of [
    ['md', 'SUBSCRIPTION_TYPE_MARKET_DATA'],
    ['tr', 'SUBSCRIPTION_TYPE_TRADE'],
  ])
    ws.send(JSON.stringify({ subscribe: { requestId, subscriptionType, marketSlugs: [slug] } }));
});

ws.on('message', (data) => {
  const m = JSON.parse(String(data));
  if (m.error !== undefined) console.error(`Polymarket US error (${m.requestId ?? '-'}): ${m.error}`);
  else if (m.marketData) {
    // Levels best first, as the venue sends them.
    const levels = (list) => list.map((l) => [l.px.value, l.qty]);
    book = { bids: levels(m.marketData.bids), asks: levels(m.marketData.offers) };
  } else if (m.trade) trades++;
});

ws.on('close', (code, reason) => {
  console.log(JSON.stringify({ close: [code, String(reason)], ...book, trades }));
});
