/**
 * Rule 7 on this side (docs/history.md), for `HistoryClient.rebuild`, `replay` and `events`: the book from the latest
 * snapshot at or before a moment (`startingBook`), then every delta, later snapshot and recorded gap of the range in
 * time order (`walk`, over the rows of history-series.ts; gaps from the coverage endpoint) — and for `events`, the
 * trades and the trades' gaps among the deltas, in the one (ts, sequence) order of the service's `include=trades`
 * stream. Gaps are reported, never papered over; a replayed book that differs from a recorded snapshot is an error.
 */
import { BookError, DataError, HttpError, type DataLocation } from './errors.js';
import type { Transport } from './http.js';
import { assertCount, assertMoment, getCoverage, historyPath, iso } from './history-requests.js';
import { splitLines } from './lines.js';
import { checkEnd, itemMs, series, type Batch, type LineTaker, type SeriesItem } from './history-series.js';
import type { ExtraField, MarketEvent, RangeOptions, ReplayEvent } from './history-types.js';
import { OrderBook } from './order-book.js';
import { checkEndLine, lastParsedTs, parseLine, parseLineAt, type Gap, type SnapshotRow } from './rows.js';
import {
  formatTimestamp,
  formatTimestampLike,
  parseServiceTimestamp,
  parseTimestamp,
  type Moment,
} from './timestamps.js';

/**
 * `HistoryClient.rebuild`: the book at `at` from the latest snapshot at or before it (or a gap's end), walked up to
 * `at`; `in_gap` when `at` lies in a recorded gap.
 */
export async function rebuildAt(
  http: Transport,
  exchange: string,
  ticker: string,
  at: Moment,
  options: { lookbackMs?: number; signal?: AbortSignal },
): Promise<OrderBook> {
  const t = assertMoment(at, 'at') as number;
  const book = await startingBook(http, exchange, ticker, t, options.lookbackMs, options.signal);
  let open: Gap | undefined;
  for await (const event of walk(http, book, exchange, ticker, t, t, { signal: options.signal })) {
    if (event.type === 'gap') open = event.gap;
    else if (event.type === 'snapshot' && event.restarted) open = undefined;
  }
  if (open !== undefined && t < parseTimestamp(open.to_ts)) {
    throw new BookError(
      'in_gap',
      `${formatTimestamp(t)} lies in a recorded gap (${open.reason}, ${open.from_ts} – ${open.to_ts})`,
      { exchange, ticker, ts: t },
    );
  }
  return book;
}

/**
 * The one replay loop (rebuild, replay and events): from `book` (at its snapshot) through every delta, later snapshot
 * and gap up to `to`, in time order; at equal `ts` a gap's start comes first, then a snapshot (the book after
 * every delta before it), then a restart at a gap's end, then the deltas. Yields snapshots ≥ `from`, gaps that end
 * after `from`, and — replay — a `book` event per moment ≥ `from`, or — events — a `delta` event per change and a
 * `trade` event per trade ≥ `from` (in the stream's order) and the trades' gaps that end after `from`.
 */
export async function* walk(
  http: Transport,
  start: OrderBook | undefined,
  exchange: string,
  ticker: string,
  from: number,
  to: number | undefined,
  options: {
    pageSize?: number;
    lookbackMs?: number;
    signal?: AbortSignal;
    onGap?: 'event' | 'error';
    verifySnapshots?: boolean;
    /** `events`: the trades interleaved, and an event per change rather than per moment. */
    mode?: 'replay' | 'events';
    fields?: readonly ExtraField[];
  },
): AsyncGenerator<ReplayEvent | MarketEvent> {
  const signal = options.signal;
  const events = options.mode === 'events';
  // The book to walk from (`rebuild` gives it), else the latest snapshot at or before `from`.
  const book = start ?? (await startingBook(http, exchange, ticker, from, options.lookbackMs, signal));
  const begin = book.ts as number;
  const range = { end: to, pageSize: options.pageSize, signal };
  // Deltas come in batches (one per received chunk) and are walked synchronously inside a batch. With `events`, the
  // trades and the trades' gaps come among them (the book's gaps come from coverage, as for replay: their markers in
  // the stream are passed over).
  const deltas = new BatchCursor(
    series(http, 'delta', exchange, ticker, {
      ...range,
      start: begin,
      trades: events,
      gaps: events,
      fields: events ? options.fields : undefined,
    }),
  );
  // Later snapshots (a range of one moment has none: the service refuses start_ts after end_ts): their digests, or
  // their rows from a service without digests.
  const books = (
    (to !== undefined && begin + 1 > to) || options.verifySnapshots === false
      ? none<Recorded>()
      : recordedSnapshots(http, exchange, ticker, { ...range, start: begin + 1 })
  )[Symbol.asyncIterator]();
  try {
    // The three reads from the book's moment go out together (one round trip, not three): the range's gaps, the
    // first deltas and the first later snapshot.
    const [recordedGaps, , first] = await allSettled([
      gapsIn(http, exchange, ticker, begin, to, signal),
      deltas.fill(),
      books.next(),
    ] as const);
    const gaps = recordedGaps
      .map((g) => ({ gap: g, from: parseTimestamp(g.from_ts), to: parseTimestamp(g.to_ts) }))
      .filter((g) => g.to > begin && (to === undefined || g.from <= to))
      .sort((a, b) => a.from - b.from);
    let nextBook = first;
    let gapIndex = 0;
    /** Inside a gap until this moment (-Infinity: not in one). */
    let skipUntil = -Infinity;
    let pending: number | undefined;
    /** The `ts` text of the pending moment's last delta. */
    let pendingText = '';
    for (;;) {
      const item = deltas.current();
      const deltaTs = deltas.currentTs();
      const bookTs = nextBook.done ? Infinity : nextBook.value.ts;
      const gap = gaps[gapIndex];
      const gapTs = gap ? gap.from : Infinity;
      const restartTs = skipUntil === -Infinity || (to !== undefined && skipUntil > to) ? Infinity : skipUntil;
      const next = Math.min(deltaTs, bookTs, gapTs, restartTs);
      // A moment is complete when the next event is later: the book after it.
      if (pending !== undefined && next > pending) {
        book.settle();
        if (!events && pending >= from) {
          yield { type: 'book', ts: formatTimestampLike(pendingText, pending), at: pending, book };
        }
        pending = undefined;
      }
      if (next === Infinity) break;
      if (gap && gapTs === next) {
        gapIndex++;
        skipUntil = Math.max(skipUntil, gap.to);
        if (gap.to > from) {
          if (options.onGap === 'error') {
            const g = gap.gap;
            throw new BookError('in_gap', `the series has a recorded gap (${g.reason}, ${g.from_ts} – ${g.to_ts})`, {
              exchange,
              ticker,
              ts: gap.from,
            });
          }
          yield { type: 'gap', gap: gap.gap };
        }
        continue;
      }
      if (bookTs === next) {
        const recorded = nextBook.value;
        nextBook = await books.next();
        if (bookTs < skipUntil) continue; // inside a gap: the gap's end decides where the book restarts
        const restarted = skipUntil !== -Infinity;
        if (restarted) {
          // The rows of a book known by its digest are read now, and must be that book.
          book.loadSnapshot(await recorded.rows(), bookTs);
          if (!recorded.matches(book)) {
            throw new BookError(
              'snapshot_mismatch',
              'the rows read for the recorded book a gap restarts from differ from its digest',
              { exchange, ticker, ts: bookTs },
            );
          }
        }
        // A snapshot at S is the book after every delta with ts < S: it must equal the replayed book (its digest, or
        // its text as the service writes it, else its rows by value).
        else if (recorded.matches(book)) {
          book.passSnapshot(bookTs);
        } else {
          throw new BookError(
            'snapshot_mismatch',
            'the replayed book differs from the recorded snapshot of the same moment, outside any recorded gap',
            { exchange, ticker, ts: bookTs },
          );
        }
        skipUntil = -Infinity;
        if (bookTs >= from) {
          yield { type: 'snapshot', ts: formatTimestampLike(recorded.tsText, bookTs), at: bookTs, book, restarted };
        }
        continue;
      }
      if (restartTs === next) {
        // The gap ended without a snapshot (the book was empty then): it restarts empty. Without the snapshots'
        // stream, the snapshot at the gap's end (if any) is read here.
        const rows =
          options.verifySnapshots === false ? await snapshotAt(http, exchange, ticker, restartTs, signal) : [];
        book.loadSnapshot(rows, restartTs);
        skipUntil = -Infinity;
        if (restartTs >= from) {
          yield { type: 'snapshot', ts: formatTimestamp(restartTs), at: restartTs, book, restarted: true };
        }
        continue;
      }
      if (item !== undefined && 'type' in item) {
        if (item.type === 'trade') {
          // Inside a gap of the book there is no book: the trade is given without one.
          if (deltaTs >= from) {
            yield { type: 'trade', ts: item.ts, at: deltaTs, trade: item, book: deltaTs >= skipUntil ? book : null };
          }
        } else if (item.type === 'trades_gap') {
          const { type: _marker, ...g } = item;
          if (parseTimestamp(g.to_ts) > from) {
            if (options.onGap === 'error') {
              throw new BookError('in_gap', `the trades have a recorded gap (${g.reason}, ${g.from_ts} – ${g.to_ts})`, {
                exchange,
                ticker,
                ts: deltaTs,
              });
            }
            yield { type: 'trades_gap', gap: g };
          }
        }
      } else if (item !== undefined && deltaTs >= skipUntil) {
        book.applyAt(item, deltaTs);
        pending = deltaTs;
        pendingText = item.ts;
        if (events && deltaTs >= from) yield { type: 'delta', ts: item.ts, at: deltaTs, delta: item, book };
      }
      if (!deltas.advance()) await deltas.fill();
    }
  } finally {
    await deltas.close();
    await books.return?.(undefined);
  }
}

/** Snapshot rows grouped into books (one per `ts`). */
async function* booksIn(
  http: Transport,
  exchange: string,
  ticker: string,
  options: RangeOptions,
): AsyncGenerator<{ ts: number; rows: SnapshotRow[] }> {
  let rows: SnapshotRow[] = [];
  let text: string | undefined;
  let ts = 0;
  const done: { ts: number; rows: SnapshotRow[] }[] = [];
  for await (const batch of series(http, 'snapshot', exchange, ticker, options) as AsyncGenerator<SnapshotRow[]>) {
    for (const row of batch) {
      if (row.ts !== text) {
        if (rows.length) done.push({ ts, rows });
        rows = [];
        text = row.ts;
        ts = parseTimestamp(row.ts);
      }
      rows.push(row);
    }
    // The books completed by this batch (the last one may go on in the next).
    for (const book of done) yield book;
    done.length = 0;
  }
  if (rows.length) yield { ts, rows };
}

/** The rows of the snapshot recorded at `ts` (none: no book was recorded then). */
async function snapshotAt(
  http: Transport,
  exchange: string,
  ticker: string,
  ts: number,
  signal: AbortSignal | undefined,
): Promise<SnapshotRow[]> {
  const rows: SnapshotRow[] = [];
  for await (const batch of series(http, 'snapshot', exchange, ticker, { start: ts, end: ts, signal })) {
    for (const r of batch) if (!('type' in r)) rows.push(r);
  }
  return rows;
}

/** A recorded snapshot as the replay checks it: whether the replayed book equals it, and its rows to restart from. */
interface Recorded {
  ts: number;
  /** Its `ts` as the service wrote it ('' when unknown): the snapshot event's, without a `Date`. */
  tsText: string;
  matches(book: OrderBook): boolean;
  rows(): SnapshotRow[] | Promise<SnapshotRow[]>;
}

/**
 * The later snapshots of a range as the replay checks them: their digests (`format=digest`, one line per book,
 * compared with `OrderBook.digest()`), or — from a service that has no digests (it refuses the format, or answers
 * JSON) — their rows (`recordedBooks`).
 */
async function* recordedSnapshots(
  http: Transport,
  exchange: string,
  ticker: string,
  options: RangeOptions,
): AsyncGenerator<Recorded> {
  const signal = options.signal;
  const path = historyPath(exchange, 'snapshots', ticker);
  let cursor: string | undefined;
  /** Where the books not yet given begin (pages end on whole books): where the rows take over after a refusal. */
  let rest = options.start as number;
  for (;;) {
    const url = http.url(path, {
      start_ts: cursor === undefined ? iso(options.start as number) : undefined,
      end_ts: cursor === undefined ? iso(options.end as number | undefined) : undefined,
      limit: options.pageSize,
      cursor,
      format: 'digest',
    });
    let answer;
    try {
      answer = await http.request(url, { signal, headers: { Accept: 'application/x-ndjson' } });
    } catch (err) {
      // A service without digests (also a replica of an older version answering a later page, mid-deploy).
      if (err instanceof HttpError && err.status === 400 && err.code === 'invalid_format') {
        return yield* recordedBooks(http, exchange, ticker, { ...options, start: rest });
      }
      throw err;
    }
    if (!/^application\/(x-)?ndjson/i.test(answer.response.headers.get('content-type') ?? '')) {
      // A service that answers JSON pages only.
      answer.cancel();
      return yield* recordedBooks(http, exchange, ticker, { ...options, start: rest });
    }
    const where = { url: answer.url, requestId: answer.requestId, line: 0 };
    const source = splitLines(answer.chunks(), where);
    let end: { count: number; next_cursor: string | null } | undefined;
    let count = 0;
    for await (const { text, bounds } of source.batches) {
      const batch: Recorded[] = [];
      for (let i = 0; i < bounds.length; i += 2) {
        where.line++;
        const line = text.slice(bounds[i], bounds[i + 1]);
        if (line === '') continue;
        if (end !== undefined)
          throw new DataError('malformed_body', 'a line after the end line', { ...where, text: line });
        const item = digestLine(line, where);
        if ('count' in item) end = item;
        else {
          count++;
          batch.push(item);
        }
      }
      for (const item of batch) {
        rest = item.ts + 1;
        yield item;
      }
    }
    checkEnd(end, count, source.complete(), where, 'books');
    if (end.next_cursor === null) return;
    cursor = end.next_cursor;
  }

  /** One line of a digest stream: a book's digest, or the end line. */
  function digestLine(line: string, where: DataLocation): Recorded | { count: number; next_cursor: string | null } {
    let v: { ts?: unknown; levels?: unknown; digest?: unknown; type?: unknown; count?: unknown; next_cursor?: unknown };
    try {
      v = JSON.parse(line) as typeof v;
    } catch {
      throw new DataError('malformed_row', 'a digest line that is not JSON', { ...where, text: line });
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      throw new DataError('malformed_row', 'a digest line that is not a JSON object', { ...where, text: line });
    }
    if (v.type === 'end') return checkEndLine(v, { ...where, text: line });
    const ts = typeof v.ts === 'string' ? parseTimestamp(v.ts) : NaN;
    const levels = v.levels;
    const digest = v.digest;
    if (
      Number.isNaN(ts) ||
      !Number.isSafeInteger(levels) ||
      (levels as number) < 0 ||
      typeof digest !== 'string' ||
      !/^(0|[1-9][0-9]{0,18})$/.test(digest)
    ) {
      throw new DataError('malformed_row', 'not a digest line ({"ts","levels","digest"})', { ...where, text: line });
    }
    return {
      ts,
      tsText: v.ts as string,
      // The same number of levels and the same digest: the same book (digest.ts says how sure that is).
      matches: (book) => book.depth() === levels && book.digest() === digest,
      rows: () => snapshotAt(http, exchange, ticker, ts, signal),
    };
  }
}

/**
 * A recorded snapshot as its lines arrived (`lines`: each ending in a newline), compared in place with the replayed
 * book (`OrderBook.matchesLines`); `rows()` parses and checks them when that comparison fails or the book restarts
 * from it.
 */
interface RecordedBook extends Recorded {
  ts: number;
  /** The `ts` text of its first line ('' when that line is not in the service's shape). */
  tsText: string;
  /** How its lines begin: `{"ts":"` and tsText and the closing quote ('' without tsText). */
  head: string;
  lines: string;
  rows(): SnapshotRow[];
}

/**
 * The snapshots of a range as `RecordedBook`s: the stream's row lines are taken in place and grouped by `ts` (read
 * from each line's text; a line of another shape is parsed for it), with no row made; the end line is checked as ever.
 * A service that answers JSON pages only gives its rows parsed: each goes the same way as the line a stream would
 * have held for it (its JSON text).
 */
async function* recordedBooks(
  http: Transport,
  exchange: string,
  ticker: string,
  options: RangeOptions,
): AsyncGenerator<RecordedBook> {
  const done: RecordedBook[] = [];
  let book: RecordedBook | undefined;
  let where: DataLocation = {};
  // The current book's lines in the chunk at hand: text[from, to).
  let text = '';
  let from = 0;
  let to = 0;
  const close = () => {
    if (book && to > from) book.lines += text.slice(from, to);
    from = to;
  };
  const take: LineTaker = (chunk, start, end, at) => {
    // A line of the book at hand begins with its `{"ts":"…"` (one comparison: most lines are).
    const same = book !== undefined && book.head !== '' && chunk.startsWith(book.head, start);
    if (!same && chunk.startsWith('{"type":', start)) return false; // the end line (and any marker): parsed as ever
    if (chunk !== text) {
      close();
      text = chunk;
      from = to = start;
    }
    let ts: number;
    let tsText = '';
    if (same) {
      ts = (book as RecordedBook).ts;
    } else {
      const row = parseLineAt('snapshot', chunk, start, end, at);
      if ('type' in row) throw new DataError('malformed_row', 'a marker among snapshot rows', { ...at });
      ts = lastParsedTs();
      tsText = parseServiceTimestamp(row.ts) === ts && chunk.startsWith('{"ts":"', start) ? row.ts : '';
    }
    if (book === undefined || ts !== book.ts) {
      close();
      if (book) done.push(book);
      where = { ...at };
      book = recordedBook(ts, tsText, where);
    }
    // Through the line's newline (a `\r` before it too: such lines then compare by value).
    to = chunk.indexOf('\n', end) + 1;
    return true;
  };
  for await (const batch of series(http, 'snapshot', exchange, ticker, { ...options, take })) {
    if (batch.length) {
      const lines = batch.map((row) => {
        if ('type' in row) throw new DataError('malformed_row', 'a marker among snapshot rows', { ...where });
        return `${JSON.stringify(row)}\n`;
      });
      const chunk = lines.join('');
      let from = 0;
      for (const [i, line] of lines.entries()) {
        take(chunk, from, from + line.length - 1, { line: i + 1 });
        from += line.length;
      }
    }
    close();
    for (const b of done) yield b;
    done.length = 0;
  }
  close();
  if (book) yield book;
}

function recordedBook(ts: number, tsText: string, where: DataLocation): RecordedBook {
  return {
    ts,
    tsText,
    head: tsText === '' ? '' : `{"ts":"${tsText}"`,
    lines: '',
    matches(book) {
      return book.matchesLines(this.lines, this.tsText) || book.equalsSnapshot(this.rows());
    },
    rows() {
      const rows: SnapshotRow[] = [];
      for (const line of this.lines.split('\n')) {
        if (line === '' || line === '\r') continue;
        const row = parseLine('snapshot', line, where);
        if ('type' in row) throw new DataError('malformed_row', 'a marker among snapshot rows', { ...where });
        // Lines are grouped by their text's first `ts`: a line whose parsed `ts` is another moment is not this book's.
        if (parseTimestamp(row.ts) !== ts) {
          throw new DataError('malformed_row', `a row at ${row.ts} among a snapshot's rows at ${formatTimestamp(ts)}`, {
            ...where,
          });
        }
        rows.push(row);
      }
      return rows;
    },
  };
}

/** The latest snapshot at or before `at`, as a book: windows growing backwards from `at`. */
async function startingBook(
  http: Transport,
  exchange: string,
  ticker: string,
  at: number,
  lookbackMs = 86_400_000,
  signal?: AbortSignal,
): Promise<OrderBook> {
  // As the Python client's `lookback` (a positive timedelta): 0 gave no_snapshot at once, a negative one a 400, NaN
  // a "start is not a moment".
  assertCount(lookbackMs, 'lookbackMs');
  for (let span = 15 * 60_000; ; span *= 4) {
    const w = Math.min(span, lookbackMs);
    let last: { ts: number; rows: SnapshotRow[] } | undefined;
    for await (const b of booksIn(http, exchange, ticker, { start: at - w, end: at, signal })) last = b;
    if (last) return OrderBook.fromSnapshot(last.rows, { exchange, ticker });
    if (w >= lookbackMs) {
      // No snapshot: a gap that ended (closed by an empty book, which writes no rows) is where the book starts.
      const ended = (await gapsIn(http, exchange, ticker, at - w, at, signal))
        .map((g) => parseTimestamp(g.to_ts))
        .filter((t) => t <= at);
      if (ended.length) {
        const book = new OrderBook({ exchange, ticker });
        book.loadSnapshot([], Math.max(...ended));
        return book;
      }
      throw new BookError('no_snapshot', `no snapshot within ${lookbackMs} ms before ${formatTimestamp(at)}`, {
        exchange,
        ticker,
        ts: at,
      });
    }
  }
}

/**
 * Awaits every one of `work` (so none is left running unobserved when another fails), then gives their values or
 * throws the error of the first, in the given order, that failed.
 */
async function allSettled<T extends readonly unknown[]>(work: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(work);
  for (const r of settled) if (r.status === 'rejected') throw r.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/** Gaps overlapping [from, to] from `coverage`; none when the service has no coverage endpoint (404 not_found). */
async function gapsIn(
  http: Transport,
  exchange: string,
  ticker: string,
  from: number,
  to: number | undefined,
  signal?: AbortSignal,
) {
  try {
    return (await getCoverage(http, exchange, ticker, { start: from, end: to, signal })).gaps;
  } catch (err) {
    if ((err as { code?: string }).code === 'not_found') return [];
    throw err;
  }
}

/** Reads batches one item at a time, awaiting only when a batch is used up. */
class BatchCursor<T extends SeriesItem<'delta'>> {
  private batch: Batch<T> = [];
  private i = 0;
  constructor(private readonly source: AsyncGenerator<Batch<T>>) {}

  /** The `ts` of the item at hand in epoch ms (a gap marker's: its start; Infinity once the source has ended). */
  currentTs(): number {
    const item = this.batch[this.i];
    if (item === undefined) return Infinity;
    return this.batch.ms?.[this.i] ?? itemMs(item);
  }

  /** Moves to the next item within the batch; false when the batch is used up (then `fill`). */
  advance(): boolean {
    return ++this.i < this.batch.length;
  }

  /** Loads batches until one has an item left, or the source ends. */
  async fill(): Promise<void> {
    while (this.i >= this.batch.length) {
      const r = await this.source.next();
      if (r.done) return;
      this.batch = r.value;
      this.i = 0;
    }
  }

  /** The item at hand; undefined once the source has ended. */
  current(): T | undefined {
    return this.batch[this.i];
  }

  async close(): Promise<void> {
    await this.source.return(undefined);
  }
}

// eslint-disable-next-line require-yield
async function* none<T>(): AsyncGenerator<T> {
  return;
}
