import type { BookEngine } from './book/engine';
import type { BookPlatform, Instrument, IntBook } from './book/types';
import { decimalBook } from './book/view';
import { formatScaled } from './core/decimal';
import { SimError } from './errors';
import type { Topology } from './topology';
import type { BookEventView, SimBooks } from './types';

/** `sim.books`: the engine's books as exact decimal strings, looked up by any platform alias. */
export function createBooksApi(engine: BookEngine, topology: Topology): SimBooks {
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
  const eventView = (inst: Instrument, e: { seq: number; ts: number; changes: number[] }): BookEventView => {
    const changes = [];
    for (let i = 0; i < e.changes.length; i += 4) {
      changes.push({
        side: e.changes[i] === 0 ? ('bid' as const) : ('ask' as const),
        price: formatScaled(e.changes[i + 1] as number, inst.priceDecimals),
        quantity: formatScaled(e.changes[i + 2] as number, inst.qtyDecimals),
        delta: formatScaled(e.changes[i + 3] as number, inst.qtyDecimals),
      });
    }
    return { seq: e.seq, ts: e.ts, changes };
  };

  return {
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
}
