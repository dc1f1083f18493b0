import type { BookEngine } from './book/engine';
import { BID, type BookEvent, type BookPlatform, type Instrument, type IntBook, type TimedTrade } from './book/types';
import { decimalBook } from './book/view';
import { formatScaled } from './core/decimal';
import { SimError } from './errors';
import type { Topology } from './topology';
import type { BookEventView, SimBooks, SimTrade } from './types';

/** How a platform publishes a trade (its module's `trade`), or undefined for the generic description. */
export type TradeDescriber = (inst: Instrument, trade: TimedTrade) => SimTrade | undefined;

/** A trade named by its number, in the instrument's precision: platforms that publish no trades of their own. */
function genericTrade(inst: Instrument, t: TimedTrade): SimTrade {
  return {
    id: null,
    ticker: inst.ticker,
    no: t.no,
    ts: t.ts,
    price: formatScaled(t.price, inst.priceDecimals),
    size: formatScaled(t.size, inst.qtyDecimals),
    side: t.takerSide === BID ? 'buy' : 'sell',
    venueSide: '',
  };
}

/** `sim.books` and `sim.trades`: the engine's books and trades as exact decimal strings, by any platform alias. */
export function createBooksApi(
  engine: BookEngine,
  topology: Topology,
  describeTrade: TradeDescriber = () => undefined,
): { books: SimBooks; trades: (platform: string, ticker?: string, sinceMs?: number) => SimTrade[] } {
  const bookPlatform = (name: string): BookPlatform => {
    const p = topology.resolveBookPlatform(name);
    if (!p) {
      throw new SimError('not_found', `"${name}" has no order books (one of ${topology.bookPlatforms().join(', ')})`);
    }
    return p;
  };
  const instrument = (name: string, ticker: string): Instrument => {
    const p = bookPlatform(name);
    const inst = engine.instrument(p, ticker);
    if (!inst) throw new SimError('not_found', `unknown ${p} ticker "${ticker}"`);
    return inst;
  };
  const view = (inst: Instrument, book: IntBook) => {
    const v = decimalBook(inst, book);
    const native = topology.platforms[inst.platform]?.sim.book?.view;
    return native ? native(v, inst, book) : v;
  };
  const trade = (inst: Instrument, t: TimedTrade): SimTrade => describeTrade(inst, t) ?? genericTrade(inst, t);
  const eventView = (inst: Instrument, e: BookEvent): BookEventView => {
    const changes = [];
    for (let i = 0; i < e.changes.length; i += 4) {
      changes.push({
        side: e.changes[i] === 0 ? ('bid' as const) : ('ask' as const),
        price: formatScaled(e.changes[i + 1] as number, inst.priceDecimals),
        quantity: formatScaled(e.changes[i + 2] as number, inst.qtyDecimals),
        delta: formatScaled(e.changes[i + 3] as number, inst.qtyDecimals),
      });
    }
    return { seq: e.seq, ts: e.ts, changes, trades: e.trades.map((t) => trade(inst, { ...t, ts: e.ts, seq: e.seq })) };
  };

  const trades = (platform: string, ticker?: string, sinceMs?: number): SimTrade[] => {
    const p = bookPlatform(platform);
    const insts = ticker === undefined ? engine.instruments(p) : [instrument(p, ticker)];
    const out: SimTrade[] = [];
    for (const inst of insts) {
      for (const t of engine.trades(p, inst.ticker, sinceMs) ?? []) out.push(trade(inst, t));
    }
    return ticker === undefined
      ? out.sort((a, b) => a.ts - b.ts || (a.ticker < b.ticker ? -1 : a.ticker > b.ticker ? 1 : 0) || a.no - b.no)
      : out;
  };

  const books: SimBooks = {
    platforms: () => topology.bookPlatforms(),
    tickers: (platform) =>
      engine
        .instruments(bookPlatform(platform))
        .map((i) => i.ticker)
        .sort(),
    book: (platform, ticker) => {
      const inst = instrument(platform, ticker);
      const b = engine.book(inst.platform, ticker);
      return view(inst, b ? b.snapshot() : { bids: [], asks: [] });
    },
    bookAt: (platform, ticker, tsMs) => {
      const inst = instrument(platform, ticker);
      const b = engine.bookAt(inst.platform, ticker, tsMs);
      if (!b) {
        const oldest = engine.oldestRetainedTs(inst.platform, ticker);
        throw new SimError('not_found', `no retained history of ${ticker} at ${tsMs} (oldest: ${oldest})`);
      }
      return view(inst, b);
    },
    events: (platform, ticker, sinceMs) => {
      const inst = instrument(platform, ticker);
      return (engine.events(inst.platform, ticker, sinceMs) ?? []).map((e) => eventView(inst, e));
    },
    last: (platform, ticker) => {
      const inst = instrument(platform, ticker);
      const seq = engine.lastSeq(inst.platform, ticker);
      return { seq, ts: seq > 0 ? (engine.lastTs(inst.platform, ticker) as number) : null };
    },
    pause: () => engine.pause(),
    resume: () => engine.resume(),
    isPaused: () => engine.isPaused,
    step: (n = 1) => engine.step(n),
    setUpdatesPerSecond: (n) => engine.setRate(n),
  };
  return { books, trades };
}
