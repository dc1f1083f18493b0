/**
 * The README's examples, runnable against `./dev up --sim`:
 *
 *   set -a; eval "$(./dev env)"; set +a
 *   node packages/client/examples/quickstart.mts
 *
 * (HISTORY_URL, GATEWAY_URL and DEMO_API_KEY come from `./dev env`.)
 */
import { BookError, Decimal, GatewayClient, HistoryClient, HttpError, bookChecksum } from '@depthgate/client';

const apiKey = process.env.DEMO_API_KEY;
const history = new HistoryClient({ baseUrl: process.env.HISTORY_URL ?? 'http://127.0.0.1:7081', apiKey });
const gateway = new GatewayClient({ baseUrl: process.env.GATEWAY_URL ?? 'http://127.0.0.1:7080', apiKey });

// Tickers with data in your window, and what is recorded for one of them.
const [ticker] = await history.tickers('venue_b', { prefix: 'KXBTCD' });
if (ticker === undefined) throw new Error('no venue_b ticker recorded yet');
const coverage = await history.coverage('venue_b', ticker);
console.log(ticker, 'deltas', coverage.deltas.rows, 'first', coverage.deltas.first_ts, 'gaps', coverage.gaps.length);

// Every delta of the last minute: an async iterator over the NDJSON stream (cursors followed for you).
let n = 0;
for await (const d of history.deltas('venue_b', ticker, { start: Date.now() - 60_000 })) {
  if (n++ < 3) console.log(d.ts, d.sequence, d.side, d.price, d.quantity_delta);
}
console.log(n, 'deltas in the last minute');

// The book 10 s ago, rebuilt here by rule 7, and the service's own: the same levels and checksum.
const at = Date.now() - 10_000;
try {
  const book = await history.rebuild('venue_b', ticker, at);
  const service = await history.book('venue_b', ticker, { at, depth: 5 });
  console.log('best', book.best(), 'spread', book.spread(), 'mid', book.mid());
  if (service.status === 'ok') console.log('checksums', book.checksum(5), bookChecksum(service.bids, service.asks, 5));
} catch (err) {
  if (err instanceof BookError && err.code === 'in_gap') console.log('10 s ago lies in a recorded gap');
  else throw err;
}

// The book after every change of the last 30 s, gaps reported.
let moments = 0;
for await (const e of history.replay('venue_b', ticker, { from: Date.now() - 30_000 })) {
  if (e.type === 'book') moments++;
  if (e.type === 'gap') console.log('gap', e.gap.reason, e.gap.from_ts, e.gap.to_ts);
}
console.log(moments, 'moments replayed');

// The trades of the last hour, their 5-minute bars, and the changes and trades of the last minute in the order they
// arrived, the book kept current (a trade inside a gap of the book comes without one).
let trades = 0;
for await (const t of history.trades('venue_b', ticker, { start: Date.now() - 3_600_000 })) {
  if (trades++ < 3) console.log('trade', t.ts, t.side, t.size, '@', t.price);
}
console.log(trades, 'trades in the last hour');
for await (const b of history.bars('venue_b', ticker, '5m', { start: Date.now() - 3_600_000 })) {
  console.log('bar', b.ts, b.open, b.high, b.low, b.close, 'volume', b.volume, 'vwap', b.vwap, 'trades', b.trades);
}
const counts = { delta: 0, trade: 0, snapshot: 0, gap: 0, trades_gap: 0 };
for await (const e of history.events('venue_b', ticker, { from: Date.now() - 60_000 })) {
  counts[e.type]++;
  if (e.type === 'trade' && counts.trade <= 3)
    console.log('trade at', e.ts, e.trade.side, e.trade.size, 'best', e.book?.best());
}
console.log('events', JSON.stringify(counts));

// A service's error: its code is the error's `code`.
try {
  await history.book('venue_b', 'NO-SUCH-TICKER');
} catch (err) {
  if (err instanceof HttpError) console.log('history error', err.status, err.code);
  else throw err;
}

// Exact arithmetic.
console.log(Decimal.parse('0.1').add('0.2').toString(), Decimal.parse('0.47').add('0.48').half().toString());

// The gateway: a platform's resource, and a read-only batch POST.
const markets = await gateway.get<{ markets: unknown[] }>('kalshi', 'markets', { limit: 2 });
console.log('kalshi markets', markets.data.markets.length, 'request id', markets.requestId);
try {
  await gateway.get('kalshi', 'markets/NO-SUCH-MARKET');
} catch (err) {
  // An upstream's own error body (Kalshi's), passed through: code `http_error`, the body in `json`.
  if (err instanceof HttpError) console.log('gateway error', err.status, err.code, err.requestId);
  else throw err;
}
