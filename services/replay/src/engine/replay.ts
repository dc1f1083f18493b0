/**
 * The replay engine's driver: one ticker's recorded window, merged into the order it happened, through a venue's
 * encoder into the venue's own messages.
 *
 * Order: by `ts`; at one `ts` a gap's reset (its closing snapshot is the book at `to`, before any delta at `to`) comes
 * first, then deltas and trades by `sequence` (the ticker's counter, shared by both, so they interleave as they
 * arrived). Deltas that share `ts` and `received_ts` with no trade between them are one group: the venue's message
 * carried them together (Gemini `l2_updates`, Coinbase `l2update`, a CLOB `price_change`, a Polymarket US book); the
 * encoder decides whether its venue writes a group as one message (Kalshi writes one message per level).
 *
 * Gaps: a recorded book gap is never papered over. From its `from` on, no delta is replayed (none should exist: the
 * recorder writes the gap, then the snapshot that closes it, then deltas); at its `to` the encoder writes the venue's
 * reset form with the gap's snapshot as the new book. A window that starts inside a gap (`start` undefined) sends no
 * book until that gap closes; one that ends inside a gap (the gap has no `book`) sends no book after its `from`.
 * A window that starts before the ticker's first book (`firstBook`) is inside a gap the recorder does not write: it
 * ends at that first snapshot, which is played as a gap's reset, by the same steps. Trades are replayed whatever the
 * book's state (the recorder records them so).
 */
import { ReplayBook, sideCode } from './replay-book';
import type { NativeMessage, RecordedDelta, RecordedGap, RecordedTrade, RecordedWindow } from './types';

/**
 * Why a whole book is sent: the window's start, or the end of a recorded gap (also the ticker's first book inside
 * the window, played as the end of the gap before it: `reason` 'first_book').
 */
export type BookCause = { kind: 'start'; lastTrade: RecordedTrade | undefined } | { kind: 'gap'; gap: RecordedGap };

/**
 * A message's text, or (a message that takes a subscription's next sequence number: Kalshi's book messages) the
 * function that writes it when it is sent — see `NativeMessage.text`; or either with the market's channel it is
 * written for (`NativeMessage.channel`).
 */
export type EncodedText = string | (() => string) | { channel: string; text: string | (() => string) };

/** A venue's messages for the engine's steps. Each hook returns the step's messages, in order. */
export interface VenueEncoder {
  /** The venue's whole-book message(s) for `book` at `ts`: its snapshot (start) or its reset form (after a gap). */
  book(book: ReplayBook, ts: number, cause: BookCause): EncodedText[];
  /**
   * A group of deltas of one `ts`: the encoder applies them to `book` itself, in order (`applyDelta`), so that it can
   * write what the venue writes after each one (a CLOB entry's hash, a new absolute size).
   */
  changes(book: ReplayBook, deltas: readonly RecordedDelta[], ts: number): EncodedText[];
  /** A trade; `book` is undefined while no book is known (inside a gap). */
  trade(trade: RecordedTrade, book: ReplayBook | undefined): EncodedText[];
  /**
   * The window starts without a book (inside a gap, or before the ticker's first book) and `lastTrade` is the last
   * trade at or before its start: what the venue sends of it first (Coinbase's `last_match`); an encoder whose later
   * books name the last trade (the CLOB's `last_trade_price`) keeps it. With a book at the start, `book`'s cause
   * carries it instead. Absent: the venue names no earlier trade.
   */
  startWithoutBook?(lastTrade: RecordedTrade): EncodedText[];
}

/** Applies one recorded delta; returns the level's new quantity (0n: removed). */
export function applyDelta(book: ReplayBook, d: RecordedDelta): bigint {
  return book.apply(sideCode(d.side), d.price, d.quantity_delta);
}

/**
 * A message whose text is written when first read: a sequence number is taken in the order messages are *sent*, so
 * a server that merges several markets of one subscription in time order (looking at each one's next `ts` before
 * sending it) keeps the subscription's numbers contiguous. Read `text` in the order the messages go out.
 */
function message(received_ts: number, ts: number, encoded: EncodedText): NativeMessage {
  const { channel, text: given } = typeof encoded === 'object' ? encoded : { channel: undefined, text: encoded };
  const of = channel === undefined ? { received_ts, ts } : { received_ts, ts, channel };
  if (typeof given === 'string') return { ...of, text: given };
  let text: string | undefined;
  return {
    ...of,
    get text() {
      return (text ??= given());
    },
  };
}

/**
 * A page of a window read page by page (PagedWindow): the rows of one stretch of the window, in order, and the gaps
 * the engine needs while it plays them. A page never splits a millisecond (a group of deltas stays whole).
 */
export interface WindowPage {
  deltas: readonly RecordedDelta[];
  trades: readonly RecordedTrade[];
  /**
   * The book gaps that overlap the page's stretch, by `to`: those that close in it (`to` < `until`) with their book
   * (none when the gap closes after the window's end), and the one still open at `until`, if any (its `book` is not
   * needed yet). A gap already listed by an earlier page may be listed again.
   */
  gaps: readonly RecordedGap[];
  /** Every row (and gap end) before this moment is in this page or an earlier one, none after; Infinity: the last. */
  until: number;
}

/** One ticker's window as a first part (the book at the start) and its rows read page by page. */
export interface PagedWindow {
  ticker: string;
  start: RecordedWindow['start'];
  firstBook?: RecordedWindow['firstBook'];
  lastTrade?: RecordedTrade;
  opening: RecordedWindow['opening'];
  /**
   * The next page (the first, then each after it); asked for once a page, in order, only while the last one had
   * `until` < Infinity. The engine asks for a page as soon as it starts playing the one before (read-ahead of one).
   */
  nextPage(): WindowPage | Promise<WindowPage>;
}

/**
 * A paged replay's next page is still being read: wait for `ready` (it never rejects: a failed read is thrown by the
 * replay's next step), then ask the replay for its next message again.
 */
export class PageWait {
  constructor(readonly ready: Promise<void>) {}
}

/** The window's native messages, in order. Lazy: a consumer pulls them as fast as it sends them. */
export function replay(window: RecordedWindow, encoder: VenueEncoder): Generator<NativeMessage> {
  const page: WindowPage = { deltas: window.deltas, trades: window.trades, gaps: window.gaps, until: Infinity };
  // A window in memory is one page the engine has at once: it never waits.
  return replayPaged({ ...window, nextPage: () => page }, encoder) as Generator<NativeMessage>;
}

/** A page being read: settled in place, so the engine knows without awaiting whether it has arrived. */
interface PageRead {
  page?: WindowPage;
  error?: { err: unknown };
  ready: Promise<void>;
}

function startRead(window: PagedWindow): PageRead {
  let got: WindowPage | Promise<WindowPage>;
  try {
    got = window.nextPage();
  } catch (err) {
    return { error: { err }, ready: Promise.resolve() };
  }
  if (!(got instanceof Promise)) return { page: got, ready: Promise.resolve() };
  const read: PageRead = { ready: Promise.resolve() };
  read.ready = got.then(
    (page) => void (read.page = page),
    (err: unknown) => void (read.error = { err }),
  );
  return read;
}

/**
 * The window's native messages, in order, its rows read page by page: while a page is being read the replay yields
 * a PageWait (a consumer awaits it and goes on), the next page is read while the current one is played, and the
 * book and the gap in progress carry across pages. Memory: the book, the page played and the page read ahead.
 */
export function* replayPaged(window: PagedWindow, encoder: VenueEncoder): Generator<NativeMessage | PageWait> {
  const startTs = window.start?.ts;
  let book: ReplayBook | undefined;
  if (window.start) {
    book = ReplayBook.of(window.start.book);
    const received = window.start.received_ts ?? window.start.ts;
    for (const text of encoder.book(book, window.start.ts, { kind: 'start', lastTrade: window.lastTrade }))
      yield message(received, window.start.ts, text);
  } else if (window.lastTrade && encoder.startWithoutBook) {
    // No book yet: the last earlier trade is still what the venue names first.
    const { ts, received_ts } = window.opening;
    for (const text of encoder.startWithoutBook(window.lastTrade)) yield message(received_ts, ts, text);
  }
  // The window starts before the ticker's first book: the stretch before it is a gap (unrecorded) that it closes.
  const first = window.firstBook;
  const beforeFirst: RecordedGap | undefined = first && {
    from: Number.NEGATIVE_INFINITY,
    to: first.ts,
    reason: 'first_book',
    book: first.book,
    ...(first.received_ts === undefined ? {} : { received_ts: first.received_ts }),
  };
  // The `to` of the last gap whose reset was played: a page that lists it again leaves it out.
  let gapsDoneTo = Number.NEGATIVE_INFINITY;
  let read: PageRead | undefined = startRead(window);
  while (read) {
    while (!read.page && !read.error) yield new PageWait(read.ready);
    if (read.error) throw read.error.err;
    const page = read.page as WindowPage;
    read = page.until === Infinity ? undefined : startRead(window);
    const { deltas, trades, until } = page;
    // Gaps the start's book already covers, or an earlier page played, are behind us.
    const gaps = (beforeFirst ? [beforeFirst, ...page.gaps] : page.gaps)
      .filter((g) => (startTs === undefined || g.to > startTs) && g.to > gapsDoneTo)
      .sort((a, b) => a.to - b.to);
    let di = 0;
    let ti = 0;
    let gi = 0;
    for (;;) {
      const d = deltas[di];
      const t = trades[ti];
      const g = gaps[gi];
      // The next row in time: a gap's reset at its `to` before rows at that ts; deltas and trades by (ts, sequence).
      const row = d && (!t || d.ts < t.ts || (d.ts === t.ts && d.sequence < t.sequence)) ? d : t;
      const rowTs = d === row ? d?.ts : t?.ts;
      // (A gap that closes at or after the page's end is played by a later page, which lists it again.)
      if (g && (rowTs === undefined ? g.to < until : g.to <= rowTs)) {
        gi++;
        gapsDoneTo = g.to;
        if (!g.book) {
          book = undefined;
          continue;
        }
        book = ReplayBook.of(g.book);
        const received = g.received_ts ?? g.to;
        for (const text of encoder.book(book, g.to, { kind: 'gap', gap: g })) yield message(received, g.to, text);
        continue;
      }
      if (row === undefined) break;
      if (row === t) {
        ti++;
        for (const text of encoder.trade(t, book)) yield message(t.received_ts ?? t.ts, t.ts, text);
        continue;
      }
      // A group of deltas: same ts and received_ts, no trade before the next one.
      const group: RecordedDelta[] = [];
      for (let e = deltas[di]; e && sameMessage(e, d as RecordedDelta); e = deltas[di]) {
        if (group.length > 0 && t && (t.ts < e.ts || (t.ts === e.ts && t.sequence < e.sequence))) break;
        group.push(e);
        di++;
      }
      // Inside a gap (or before the first book) a delta has no book to change: it is not replayed.
      const inGap = book === undefined || (g !== undefined && g.from < (d as RecordedDelta).ts);
      if (inGap) continue;
      const first = group[0] as RecordedDelta;
      for (const text of encoder.changes(book as ReplayBook, group, first.ts))
        yield message(first.received_ts ?? first.ts, first.ts, text);
    }
  }
}

function sameMessage(a: RecordedDelta, b: RecordedDelta): boolean {
  return a.ts === b.ts && (a.received_ts ?? a.ts) === (b.received_ts ?? b.ts);
}
