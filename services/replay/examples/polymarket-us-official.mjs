/**
 * Polymarket's own TypeScript SDK, `polymarket-us` (0.1.1), unchanged, on the replay (docs/replay.md, "WebSocket
 * replay (Polymarket US)"): its `MarketsWebSocket` subscribes a market's book and trades and keeps the last book until
 * the replay closes the socket, then prints the book, best first, and the trades, as JSON.
 *
 *   DEPTHGATE_KEY=dg_… node services/replay/examples/polymarket-us-official.mjs <market slug> 2026-03-07T10:00:00Z 2026-03-07T11:00:00Z
 *
 * REPLAY_URL: the replay service (default ws://127.0.0.1:7083).
 *
 * - `client.ws.markets()` connects to the origin of `apiBaseUrl` plus `/v1/ws/markets`: no path or query of ours can
 *   go there. The exported `MarketsWebSocket` connects to `${baseUrl}/v1/ws/markets`: the base URL ends with a
 *   parameter the replay ignores (`&venue_path=`), which takes that suffix.
 * - It sends only its own signed headers (any Ed25519 seed will do: the replay ignores them); the depthgate key goes
 *   as the URL's user name, which the WebSocket library sends as HTTP Basic.
 */
import { randomBytes } from 'node:crypto';
import { MarketsWebSocket } from 'polymarket-us';

const [slug, from, to] = process.argv.slice(2);
const base = new URL(
  `${process.env.REPLAY_URL ?? 'ws://127.0.0.1:7083'}/ws/replay/v1/polymarket-us?${new URLSearchParams({ from, to, speed: 'max' })}&venue_path=`,
);
if (process.env.DEPTHGATE_KEY) base.username = process.env.DEPTHGATE_KEY;

const markets = new MarketsWebSocket({
  baseUrl: base.toString(),
  keyId: 'unused-by-the-replay',
  secretKey: randomBytes(32).toString('base64'),
});
let book = { bids: [], asks: [] };
const trades = [];
markets.on('marketData', (m) => {
  const levels = (list) => list.map((l) => [l.px.value, l.qty]);
  book = { bids: levels(m.marketData.bids), asks: levels(m.marketData.offers) };
});
markets.on('trade', (m) => trades.push([Date.parse(m.trade.tradeTime), m.trade.price.value, m.trade.quantity.value]));
markets.on('error', (e) => console.error(String(e)));
const closed = new Promise((resolve) => markets.on('close', resolve));
await markets.connect();
markets.subscribeMarketData('md-1', [slug]);
markets.subscribeTrades('tr-1', [slug]);
await closed;
console.log(JSON.stringify({ ...book, trades }));
