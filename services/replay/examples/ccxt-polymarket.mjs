/**
 * ccxt (4.5.84) `prediction.polymarket`, unchanged, on the replay of the CLOB market channel (docs/replay.md,
 * "WebSocket replay (Polymarket CLOB)"): `urls.api.ws` is the market channel's URL, so it is the replay's. It watches
 * one outcome token's book and trades until the replay closes the socket (1000 "replay finished"), then prints ccxt's
 * book, best first, and the trades it collected, as JSON.
 *
 *   DEPTHGATE_KEY=dg_… node services/replay/examples/ccxt-polymarket.mjs <token id> 2026-03-07T10:00:00Z 2026-03-07T11:00:00Z
 *
 * REPLAY_URL: the replay service (default ws://127.0.0.1:7083).
 *
 * - ccxt resolves an outcome through Polymarket's REST APIs (Gamma, CLOB) before it subscribes; here the outcome is
 *   given to it (`indexMarketOutcomes`), so that the example needs nothing but the replay. A bot that loads its
 *   outcomes from the venue keeps doing so.
 * - ccxt keeps prices and sizes as JavaScript numbers, and does not check the `hash`.
 * - Once the replay has closed the socket, do not call watch… again: ccxt would connect anew, and that is a new replay.
 */
import ccxt from 'ccxt';

const [token, from, to] = process.argv.slice(2);
const base = process.env.REPLAY_URL ?? 'ws://127.0.0.1:7083';
const query = new URLSearchParams({ from, to, speed: 'max' });
const key = process.env.DEPTHGATE_KEY;

const x = new ccxt.prediction.polymarket({
  urls: { api: { ws: `${base}/ws/replay/v1/polymarket-clob?${query}` } },
  options: { ws: { options: { headers: key ? { 'X-API-Key': key } : {} } } },
});
const outcome = 'REPLAY:YES';
x.indexMarketOutcomes({ market: 'REPLAY', outcomes: [{ outcome, outcomeId: token, market: 'REPLAY' }] });

await x.loadHttpProxyAgent(); // ccxt wants this before a plain ws:// connection (wss:// needs nothing)
// Both watches share the asset's one subscribe, sent before the replay starts.
const trades = x.watchTrades(token).catch(() => undefined);
await x.watchOrderBook(token);
await trades;
// The replay sends its window and closes the socket: ccxt then drops the connection.
while (Object.keys(x.clients).length > 0) await new Promise((r) => setTimeout(r, 20));
const book = x.orderbooks[outcome];
const bestFirst = (levels, sign) => levels.map(([p, q]) => [p, q]).sort(([a], [b]) => sign * (b - a));
console.log(
  JSON.stringify({
    bids: bestFirst(book.bids, 1),
    asks: bestFirst(book.asks, -1),
    trades: (x.trades?.[outcome] ?? []).map((t) => [t.timestamp, t.price, t.amount, t.side]),
  }),
);
await x.close();
