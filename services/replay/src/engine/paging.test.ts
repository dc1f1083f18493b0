import { randomWindow, type HistoryOptions } from '../testing/history';
import { VENUES, binary } from '../testing/venues';
import { mergeByClock, paced } from './clock';
import { PageWait, replay, replayPaged, type PagedWindow, type VenueEncoder, type WindowPage } from './replay';
import { sliced } from './slices';
import type { NativeMessage, RecordedGap, RecordedWindow } from './types';
import { kalshiEncoder } from './venue-b';

/** A seeded generator (mulberry32), so a failing split can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A window cut into pages as source.ts cuts it: at milliseconds where rows are (never inside one), each page listing
 * the gaps that overlap its stretch [previous until, until), with the closing book only for those that close in it.
 */
function pagesOf(w: RecordedWindow, rnd: () => number, cuts: number): WindowPage[] {
  const times = [...new Set([...w.deltas, ...w.trades].map((r) => r.ts))].sort((a, b) => a - b).slice(1);
  const untils = [...new Set(Array.from({ length: cuts }, () => times[Math.floor(rnd() * times.length)]))]
    .filter((t): t is number => t !== undefined)
    .sort((a, b) => a - b);
  untils.push(Infinity);
  let from = w.start?.ts ?? Number.NEGATIVE_INFINITY;
  return untils.map((until) => {
    const gaps = w.gaps
      .filter((g) => g.to >= from && g.from <= until)
      .map((g): RecordedGap => (g.to < until ? g : { from: g.from, to: g.to, reason: g.reason }));
    const page: WindowPage = {
      deltas: w.deltas.filter((d) => d.ts >= from && d.ts < until),
      trades: w.trades.filter((t) => t.ts >= from && t.ts < until),
      gaps,
      until,
    };
    from = until;
    return page;
  });
}

/** A paged window whose pages arrive after a macrotask (or at once, `sync`); `asked` counts the pages asked for. */
function paged(w: RecordedWindow, pages: WindowPage[], sync = false) {
  const state = { asked: 0 };
  const window: PagedWindow = {
    ticker: w.ticker,
    start: w.start,
    opening: w.opening,
    nextPage: () => {
      const page = pages[state.asked++];
      if (page === undefined) throw new Error('a page after the last was asked for');
      return sync ? page : new Promise<WindowPage>((resolve) => setImmediate(() => resolve(page)));
    },
  };
  if (w.firstBook) window.firstBook = w.firstBook;
  if (w.lastTrade) window.lastTrade = w.lastTrade;
  return { window, state };
}

/** Drains a paged replay as a server does: a PageWait awaited, a message's text read as it is sent. */
async function drain(messages: Iterator<NativeMessage | PageWait>, onWait?: () => void): Promise<NativeMessage[]> {
  const out: NativeMessage[] = [];
  for (let r = messages.next(); !r.done; r = messages.next()) {
    if (r.value instanceof PageWait) {
      onWait?.();
      await r.value.ready;
    } else out.push({ ts: r.value.ts, received_ts: r.value.received_ts, text: r.value.text });
  }
  return out;
}

const whole = (w: RecordedWindow, encoder: VenueEncoder) =>
  [...replay(w, encoder)].map((m) => ({ ts: m.ts, received_ts: m.received_ts, text: m.text }));

describe.each(VENUES)('replayPaged: $name', (v) => {
  const opts = (o: Partial<HistoryOptions> = {}): HistoryOptions => ({
    events: 80,
    gapRate: 0.08,
    ...(v.tradeId ? { tradeId: v.tradeId } : {}),
    ...o,
  });

  it('sends exactly what the whole window sends, whatever the pages (30 random windows with gaps, 1 to 12 pages)', async () => {
    let multiPage = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const w = randomWindow(`${v.name}|paged|${seed}`, v.grid, opts());
      const pages = pagesOf(w, random(seed), seed % 12);
      if (pages.length > 2) multiPage++;
      const { window, state } = paged(w, pages, seed % 3 === 0);
      expect(await drain(replayPaged(window, v.encoder()))).toEqual(whole(w, v.encoder()));
      expect(state.asked).toBe(pages.length);
    }
    expect(multiPage).toBeGreaterThan(15);
  });

  it('in slices of a few rows (sliced) sends exactly what the whole window sends, reading as far ahead', async () => {
    for (let seed = 1; seed <= 30; seed++) {
      const o = seed % 5 === 0 ? { startInGap: true } : seed % 7 === 0 ? { endInGap: true } : {};
      const w = randomWindow(`${v.name}|sliced|${seed}`, v.grid, opts(o));
      const pages = pagesOf(w, random(seed), seed % 6);
      const { window, state } = paged(w, pages, seed % 3 === 0);
      const rows = 1 + (seed % 4);
      let waits = 0;
      const messages = await drain(replayPaged(sliced(window, rows), v.encoder()), () => waits++);
      expect(messages).toEqual(whole(w, v.encoder()));
      expect(state.asked).toBe(pages.length);
      // A wait every few rows (a slice ends at the end of its last millisecond: up to 3 rows more).
      expect(waits).toBeGreaterThanOrEqual(Math.floor((w.deltas.length + w.trades.length) / (rows + 3)) - 1);
    }
  });

  it('a window starting, or ending, inside a gap, or starting before the ticker’s first book, is paged the same', async () => {
    for (const o of [{ startInGap: true }, { endInGap: true }, { startBeforeFirstBook: true }]) {
      const w = randomWindow(`${v.name}|paged|${JSON.stringify(o)}`, v.grid, opts(o));
      const pages = pagesOf(w, random(7), 6);
      expect(await drain(replayPaged(paged(w, pages).window, v.encoder()))).toEqual(whole(w, v.encoder()));
    }
  });
});

describe('replayPaged: reading', () => {
  const w = randomWindow('paged|reading', binary, {
    events: 120,
    gapRate: 0.05,
  });

  it('reads one page ahead: the next page is asked for when the engine starts the one before, not earlier', async () => {
    const pages = pagesOf(w, random(3), 8);
    expect(pages.length).toBeGreaterThan(3);
    const { window, state } = paged(w, pages);
    const messages = replayPaged(window, kalshiEncoder({ ticker: w.ticker, book: { sid: 1, seq: 0 }, tradeSid: 2 }));
    const asked: number[] = [];
    await drain(messages, () => asked.push(state.asked));
    // Each wait is for the page just asked for: never more than one page ahead of the one being played.
    asked.forEach((n, i) => expect(n).toBeLessThanOrEqual(i + 2));
    expect(state.asked).toBe(pages.length);
  });

  it('sliced, it still reads one page ahead: a page is asked for once the one two before it is played, not earlier', async () => {
    const v = randomWindow('paged|sliced-ahead', binary, { events: 120, gapRate: 0 });
    const pages = pagesOf(v, random(3), 8);
    expect(pages.length).toBeGreaterThan(3);
    const rowsOf = (upTo: number) => pages.slice(0, upTo).reduce((n, p) => n + p.deltas.length + p.trades.length, 0);
    const { window, state } = paged(v, pages);
    // Rows the encoder has played when each page was asked for.
    let played = 0;
    const playedAt: number[] = [];
    const nextPage = window.nextPage.bind(window);
    window.nextPage = () => {
      playedAt.push(played);
      return nextPage();
    };
    const encoder = kalshiEncoder({ ticker: v.ticker, book: { sid: 1, seq: 0 }, tradeSid: 2 });
    const counted: VenueEncoder = {
      book: encoder.book,
      changes: (book, deltas, ts) => ((played += deltas.length), encoder.changes(book, deltas, ts)),
      trade: (t, book) => (played++, encoder.trade(t, book)),
    };
    await drain(replayPaged(sliced(window, 3), counted));
    expect(state.asked).toBe(pages.length);
    playedAt.forEach((n, k) => {
      // Page k is asked for once page k − 2 is played, and before page k − 1 is.
      if (k >= 2) expect(n).toBeGreaterThanOrEqual(rowsOf(k - 1));
      if (k >= 1) expect(n).toBeLessThanOrEqual(rowsOf(k - 1));
    });
  });

  it('a page that cannot be read is thrown by the replay’s next step (after the messages before it)', async () => {
    const pages = pagesOf(w, random(5), 4);
    let n = 0;
    const window: PagedWindow = {
      ticker: w.ticker,
      start: w.start,
      opening: w.opening,
      nextPage: () => (n++ === 0 ? (pages[0] as WindowPage) : Promise.reject(new Error('ClickHouse went away'))),
    };
    const sent: NativeMessage[] = [];
    await expect(
      (async () => {
        const it = replayPaged(window, kalshiEncoder({ ticker: w.ticker, book: { sid: 1, seq: 0 }, tradeSid: 2 }));
        for (let r = it.next(); !r.done; r = it.next())
          if (r.value instanceof PageWait) await r.value.ready;
          else sent.push(r.value);
      })(),
    ).rejects.toThrow('ClickHouse went away');
    expect(sent.length).toBeGreaterThan(0);
  });

  it('merged and paced, paged replays give the order and the texts of whole ones (Kalshi seq contiguous)', async () => {
    const markets = ['A', 'B', 'C'].map((ticker, i) => ({
      ...randomWindow(`paged|merge|${ticker}`, binary, {
        events: 60,
        gapRate: 0.05,
      }),
      ticker,
      seed: i,
    }));
    const encoders = () => {
      const sub = { sid: 1, seq: 0 };
      return markets.map((m) => kalshiEncoder({ ticker: m.ticker, book: sub, tradeSid: 2 }));
    };
    const wholeEncoders = encoders();
    const expected = [...mergeByClock(markets.map((m, i) => replay(m, wholeEncoders[i] as VenueEncoder)))].map(
      (m) => `${m.source}:${m.message.text}`,
    );
    const pagedEncoders = encoders();
    const streams = markets.map((m, i) =>
      replayPaged(paged(m, pagesOf(m, random(11 + i), 5)).window, pagedEncoders[i] as VenueEncoder),
    );
    const got: string[] = [];
    for await (const m of paced(mergeByClock(streams), {
      speed: 'max',
      from: 0,
      now: () => 0,
      sleep: () => Promise.resolve(),
    }))
      got.push(`${m.source}:${m.message.text}`);
    expect(got).toEqual(expected);
  });
});
