/**
 * ccxt pro (4.5.84) on the replay (docs/replay.md): its `gemini` or `coinbaseexchange` class, unchanged, with its
 * WebSocket URL pointed at the replay. It watches the book and the trades of one market until the replay closes the
 * socket (1000 "replay finished"), then prints ccxt's book, best first, and the trades it collected, as JSON.
 *
 *   DEPTHGATE_KEY=dg_… node services/replay/examples/ccxt.mjs gemini BTC/USD 2026-03-07T10:00:00Z 2026-03-07T11:00:00Z
 *   DEPTHGATE_KEY=dg_… node services/replay/examples/ccxt.mjs coinbase BTC/USD 2026-03-07T10:00:00Z 2026-03-07T11:00:00Z
 *
 * REPLAY_URL: the replay service (default ws://127.0.0.1:7083).
 *
 * - ccxt reads its markets from the venue's REST API (`loadMarkets`); here they are given to it (`setMarkets`), so
 *   that the example needs nothing but the replay. A bot that loads them from the venue keeps doing so.
 * - ccxt's gemini appends `/v2/marketdata` to `urls.api.ws`: the URL ends with a parameter the replay ignores
 *   (`&venue_path=`), which takes that suffix.
 * - ccxt's coinbaseexchange signs its level2 subscribe and wants credentials for it: any will do (the replay ignores
 *   the signature fields; the depthgate key is the authentication).
 * - Once the replay has closed the socket, do not call watch… again: ccxt would connect anew, and that is a new replay.
 */
import ccxt from 'ccxt';

const [venue = 'gemini', symbol = 'BTC/USD', from, to] = process.argv.slice(2);
const base = process.env.REPLAY_URL ?? 'ws://127.0.0.1:7083';
const query = new URLSearchParams({ from, to, speed: 'max' });
const key = process.env.DEPTHGATE_KEY;
const [baseId, quoteId] = symbol.split('/');
const ws = { ws: { options: { headers: key ? { 'X-API-Key': key } : {} } } };

const market = (id) => ({
  id,
  symbol,
  base: baseId,
  quote: quoteId,
  baseId,
  quoteId,
  type: 'spot',
  spot: true,
  active: true,
  precision: {},
  limits: {},
});

let x;
if (venue === 'gemini') {
  x = new ccxt.pro.gemini({
    urls: { api: { ws: `${base}/ws/replay/v1/gemini?${query}&venue_path=` } },
    options: { fetchCurrencies: { webApiEnable: false }, ...ws },
  });
  x.setMarkets([market(`${baseId}${quoteId}`.toLowerCase())]);
} else if (venue === 'coinbase') {
  x = new ccxt.pro.coinbaseexchange({
    urls: { api: { ws: `${base}/ws/replay/v1/coinbase?${query}` } },
    options: ws,
    apiKey: 'any',
    secret: Buffer.from('any').toString('base64'),
    password: 'any',
  });
  x.setMarkets([market(`${baseId}-${quoteId}`)]);
} else throw new Error(`venue: gemini or coinbase, not ${venue}`);

await x.loadHttpProxyAgent(); // ccxt wants this before a plain ws:// connection (wss:// needs nothing)
// Both subscribes go out at once, before the replay starts (it starts REPLAY_SUBSCRIBE_SETTLE_MS after the last one).
// A watch rejects when the replay refuses the subscribe (the venue's error form) or closes before its first message.
let failed = false;
const said = (e) => {
  failed = true;
  console.error(`${e.constructor.name}: ${e.message}`);
};
const trades = x.watchTrades(symbol).catch(said);
await x.watchOrderBook(symbol).catch(said);
await trades;
if (failed && Object.keys(x.clients).length > 0) {
  // Refused: the replay waits for a subscribe it can serve; this example has no other.
  await x.close();
  process.exit(1);
}
// The replay sends its window and closes the socket: ccxt then drops the connection.
while (Object.keys(x.clients).length > 0) await new Promise((r) => setTimeout(r, 20));
// No book when the window lies inside a recorded gap (nothing to rebuild it from).
const book = x.orderbooks[symbol];
console.log(
  JSON.stringify({
    bids: (book?.bids ?? []).map(([p, q]) => [p, q]),
    asks: (book?.asks ?? []).map(([p, q]) => [p, q]),
    trades: (x.trades[symbol] ?? []).map((t) => [t.timestamp, t.price, t.amount, t.side]),
  }),
);
await x.close();
