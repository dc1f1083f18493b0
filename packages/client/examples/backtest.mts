/**
 * A worked backtest: a market maker quoting around the microprice of a recorded book, replayed from the history
 * service with `@depthgate/client`; prints its fills, inventory and P&L. The TypeScript twin of the Python client's
 * clients/python/examples/backtest.py: the same strategy, the same rules, the same arguments and the same report,
 * so the two give the same fills and P&L on the same recording. Runnable against `./dev up --sim`:
 *
 *   set -a; eval "$(./dev env)"; set +a
 *   node packages/client/examples/backtest.mts [--exchange venue_b] [--ticker T] [--minutes 10] [--fills auto]
 *
 * The strategy and every rule: examples/market-maker.mts. Fills come from one of two rules (`--fills`):
 *
 * - `book`: a resting quote fills in full when the other side's best price reaches it (from the book alone);
 * - `trades`: from the recorded trades (the client's `trades()`, `GET /api/{exchange}/trades/{ticker}`, docs/history.md
 *   "Trades"), a quote behind the quantity displayed at its price when it was placed (the queue-position rule of
 *   market-maker.mts, `fillsFromTrade`; the Python example's `fills_from_trade` is the same rule);
 * - `auto` (the default): `trades` where the history serves trades for the ticker (the trades endpoint answers
 *   200), else `book` (a service without the endpoint answers 404 `not_found`; one that has never recorded the
 *   ticker's trades, 404 `unknown_ticker`). The report's first line says which rule ran and why.
 *
 * Options: `--exchange` (default `venue_b`, Kalshi; real names work too), `--ticker` (default: the exchange's first),
 * `--end` (RFC 3339, default 5 s ago), `--start` (default `--minutes` before the end, not before the first recorded
 * snapshot), `--minutes` (10), `--size` (10), `--half-spread` (0.01), `--tick` (0.01), `--skew` (0.0005),
 * `--max-inventory` (50). `HISTORY_URL` (default http://127.0.0.1:7081) and `API_KEY` or `DEMO_API_KEY` from
 * `./dev env`.
 */
import { parseArgs } from 'node:util';
import { Decimal, HistoryClient, HttpError, formatTimestamp, parseTimestamp } from '@depthgate/client';
import { DEFAULT_PARAMS, MarketMaker, type Params, type Trade } from './market-maker.mts';

type FillRule = 'book' | 'trades';

/** The ticker's trades of a range, through the client (`trades()`: NDJSON streamed, cursors followed), as `Trade`s. */
async function* readTrades(
  history: HistoryClient,
  exchange: string,
  ticker: string,
  start: number,
  end: number,
): AsyncGenerator<Trade> {
  for await (const row of history.trades(exchange, ticker, { start, end })) {
    yield {
      ts: parseTimestamp(row.ts),
      tradeId: row.trade_id,
      price: Decimal.parse(row.price),
      size: Decimal.parse(row.size),
      side: row.side,
    };
  }
}

/**
 * Where the trades rule can run: the trades endpoint answers for this ticker (a page of one), or why not. The switch
 * that turns the trades rule on by itself where the history serves trades.
 */
async function tradesServed(history: HistoryClient, exchange: string, ticker: string, start: number, end: number) {
  try {
    await history.tradePage(exchange, ticker, { start, end, limit: 1 });
    return { served: true, why: 'the history serves trades' } as const;
  } catch (err) {
    if (err instanceof HttpError && err.status === 404 && err.code === 'not_found') {
      return { served: false, why: 'the history serves no trades yet' } as const;
    }
    if (err instanceof HttpError && err.status === 404 && err.code === 'unknown_ticker') {
      return { served: false, why: 'no trades recorded for this ticker' } as const;
    }
    throw err;
  }
}

/**
 * Replays the book from `start` to `end` (epoch ms, inclusive) and runs the market maker over it; with `trades`,
 * each trade is applied before the book of its moment (a trade at a book's `ts` comes before that book's quotes).
 */
async function run(
  history: HistoryClient,
  exchange: string,
  ticker: string,
  start: number,
  end: number,
  options: { params?: Params; trades?: AsyncIterable<Trade> } = {},
): Promise<MarketMaker> {
  const mm = new MarketMaker(options.params);
  const trades = options.trades?.[Symbol.asyncIterator]();
  let pending = (await trades?.next())?.value as Trade | undefined;
  for await (const event of history.replay(exchange, ticker, { from: start, to: end })) {
    if (event.type === 'gap') {
      // No book inside a recorded gap: pull the quotes until the book is known again.
      mm.bid = mm.ask = undefined;
      continue;
    }
    while (trades !== undefined && pending !== undefined && pending.ts <= event.at) {
      mm.fillsFromTrade(pending);
      pending = (await trades.next()).value as Trade | undefined;
    }
    if (trades === undefined) mm.fillsFromBook(event.at, event.book);
    mm.requote(event.at, event.book);
  }
  await trades?.return?.(undefined);
  return mm;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      exchange: { type: 'string', default: 'venue_b' },
      ticker: { type: 'string' },
      start: { type: 'string' },
      end: { type: 'string' },
      minutes: { type: 'string', default: '10' },
      fills: { type: 'string', default: 'auto' },
      size: { type: 'string', default: DEFAULT_PARAMS.size.toString() },
      'half-spread': { type: 'string', default: DEFAULT_PARAMS.halfSpread.toString() },
      tick: { type: 'string', default: DEFAULT_PARAMS.tick.toString() },
      skew: { type: 'string', default: DEFAULT_PARAMS.skew.toString() },
      'max-inventory': { type: 'string', default: DEFAULT_PARAMS.maxInventory.toString() },
    },
  });
  if (!['auto', 'book', 'trades'].includes(values.fills)) throw new Error('--fills: auto, book or trades');
  const base = process.env.HISTORY_URL ?? 'http://127.0.0.1:7081';
  const apiKey = process.env.API_KEY || process.env.DEMO_API_KEY;
  const history = new HistoryClient({ baseUrl: base, apiKey });
  const exchange = values.exchange;
  const ticker = values.ticker ?? (await history.tickers(exchange))[0];
  if (ticker === undefined) throw new Error(`no ${exchange} ticker recorded`);
  const end = values.end !== undefined ? parseTimestamp(values.end) : Date.now() - 5_000;
  let start: number;
  if (values.start !== undefined) start = parseTimestamp(values.start);
  else {
    const first = (await history.coverage(exchange, ticker)).snapshots.first_ts;
    start = Math.max(first === null ? end : parseTimestamp(first), end - Math.round(Number(values.minutes) * 60_000));
  }
  const params: Params = {
    size: Decimal.parse(values.size),
    halfSpread: Decimal.parse(values['half-spread']),
    tick: Decimal.parse(values.tick),
    skew: Decimal.parse(values.skew),
    maxInventory: Decimal.parse(values['max-inventory']),
  };

  // The fill rule: trades where the history serves them (auto), as asked otherwise.
  let rule: FillRule = values.fills === 'trades' ? 'trades' : 'book';
  let why = '';
  if (values.fills === 'auto') {
    const served = await tradesServed(history, exchange, ticker, start, end);
    rule = served.served ? 'trades' : 'book';
    why = ` (auto: ${served.why})`;
  }
  const trades = rule === 'trades' ? readTrades(history, exchange, ticker, start, end) : undefined;
  const mm = await run(history, exchange, ticker, start, end, { params, trades });

  const ts = (ms: number) => formatTimestamp(ms);
  console.log(`${exchange} ${ticker} from ${ts(start)} to ${ts(end)}, fills by ${rule}${why}`);
  console.log(`${mm.books} books, ${mm.requotes} quotes placed, ${mm.fills.length} fills`);
  for (const f of mm.fills.slice(0, 20)) {
    console.log(
      `  ${ts(f.ts)}  ${f.side.padEnd(4)} ${f.size.toString().padStart(8)} @ ${f.price.toString().padEnd(8)} inventory ${f.inventory.toString().padStart(8)}  (${f.rule})`,
    );
  }
  if (mm.fills.length > 20) console.log(`  … ${mm.fills.length - 20} more`);
  const pnl = mm.pnl();
  const mark = mm.lastMid === undefined ? 'no book to mark' : `marked at mid ${mm.lastMid.toString()}`;
  console.log(
    `inventory ${mm.inventory.toString()}, cash ${mm.cash.toString()}, P&L ${pnl === undefined ? '-' : pnl.toString()} (${mark})`,
  );
}

await main();
