/**
 * `OrderBook`: one ticker's book, rebuilt from a snapshot and deltas by the spec's rule 7 as the history service
 * records it (docs/history.md):
 *
 * - a snapshot at S is the whole book after every delta with `ts < S`; deltas with `ts = S` apply after it;
 * - each delta adds `quantity_delta` to the quantity at (`side`, `price`); a level whose quantity reaches zero is
 *   removed; deltas with equal `ts` apply in `sequence` order;
 * - the book at a moment T is the latest snapshot at or before T plus every delta with `ts ≤ T`.
 *
 * What would make the book wrong is an error, never a silent repair (`BookError`, with where it happened):
 * a level driven below zero (`negative_level`), a delta older than the book or out of (ts, sequence) order
 * (`out_of_order`), a best bid at or above the best ask once every delta of a moment is applied (`crossed_book`).
 * A moment's deltas may cross the book on the way (a venue's whole-book update is recorded level by level), so the
 * cross check runs when a moment is complete: when a delta of a later `ts` arrives, and in `settle()`.
 *
 * Quantities are exact: BigInt units of 10^-18, the history tables' own scale (`Decimal(38, 18)`); a value with more
 * fraction digits is refused (`invalid_decimal`). Prices are keys in canonical decimal text.
 */
import { BookError, DataError } from './errors.js';
import {
  compareCanonical,
  formatUnits,
  isCanonicalDecimal,
  canonicalDecimal,
  parseScaled,
  Decimal,
} from './decimal.js';
import { bookChecksum, type Level } from './checksum.js';
import { digestText, levelWeight } from './digest.js';
import type { DeltaRow, Side, SnapshotRow } from './rows.js';
import { formatTimestamp, parseServiceTimestamp, parseTimestamp } from './timestamps.js';

/** Fraction digits of quantities inside the book (the stored type's scale). */
const SCALE = 18;
/** How the service's row lines begin, before the `ts`. */
const HEAD = '{"ts":"';

interface LevelState {
  /** Canonical price text. */
  readonly price: string;
  /**
   * The price as the nearest double, for ordering only: rounding is monotonic, so a smaller double is a smaller
   * price; equal doubles are ordered by the exact text (compareCanonical).
   */
  readonly approx: number;
  /** Quantity in units of 10^-18; always > 0. */
  q: bigint;
  /** The level's weight in the book digest (digest.ts), once the digest is kept (`BookSide.weightOf`). */
  weight: bigint | undefined;
  /** The quantity's canonical text, computed when first asked for after a change. */
  text: string | undefined;
  /** The last `equalsSnapshot` comparison that met this level (a price given twice is caught). */
  mark: number;
  /** The level's snapshot line after its `ts` (`","side":…,"quantity":"…"}` and the newline), when asked for. */
  line: string | undefined;
}

class BookSide {
  readonly byPrice = new Map<string, LevelState>();
  /** Best first. */
  readonly sorted: LevelState[] = [];
  /** Digest weights by price: a level removed and made again at a price (most are) is not hashed again. */
  private readonly weights = new Map<string, bigint>();
  constructor(
    private readonly descending: boolean,
    private readonly name: Side,
  ) {}

  /** The digest weight of a level of this side (digest.ts). */
  weightOf(level: LevelState): bigint {
    if (level.weight !== undefined) return level.weight;
    let w = this.weights.get(level.price);
    if (w === undefined) {
      if (this.weights.size >= 65_536) this.weights.clear();
      w = levelWeight(this.name, level.price);
      this.weights.set(level.price, w);
    }
    return (level.weight = w);
  }

  /** Index where `level` is or would go, best first. */
  private search(level: LevelState): number {
    let lo = 0;
    let hi = this.sorted.length;
    const sign = this.descending ? -1 : 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const other = this.sorted[mid] as LevelState;
      const d = other.approx - level.approx || compareCanonical(other.price, level.price);
      if (sign * d < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  insert(level: LevelState): void {
    this.byPrice.set(level.price, level);
    const i = this.search(level);
    if (i === this.sorted.length) this.sorted.push(level);
    else this.sorted.splice(i, 0, level);
  }

  remove(level: LevelState): void {
    this.byPrice.delete(level.price);
    const i = this.search(level);
    if (i === this.sorted.length - 1) this.sorted.pop();
    else this.sorted.splice(i, 1);
  }

  clear(): void {
    this.byPrice.clear();
    this.sorted.length = 0;
  }

  levels(n: number | undefined): Level[] {
    const count = n === undefined ? this.sorted.length : Math.min(n, this.sorted.length);
    const out: Level[] = new Array(count);
    for (let i = 0; i < count; i++) out[i] = view(this.sorted[i] as LevelState);
    return out;
  }
}

/** A new level at `price` (canonical) holding `q`. */
function newLevel(price: string, q: bigint): LevelState {
  return { price, approx: Number(price), q, weight: undefined, text: undefined, mark: 0, line: undefined };
}

/** The level's snapshot line after its `ts`, as the service writes it. */
function lineOf(level: LevelState, side: Side): string {
  return (level.line ??= `","side":"${side}","price":"${level.price}","quantity":"${view(level).quantity}"}\n`);
}

function view(level: LevelState): Level {
  if (level.text === undefined) level.text = formatUnits(level.q, SCALE);
  return { price: level.price, quantity: level.text };
}

export interface OrderBookOptions {
  /** Named in errors. */
  exchange?: string;
  ticker?: string;
  /** Check for a crossed book when a moment is complete (default true). */
  checkCrossed?: boolean;
}

/** The best level of each side (undefined when that side is empty). */
export interface Best {
  bid: Level | undefined;
  ask: Level | undefined;
}

/** A book as plain data: the moment, the snapshot it was built from, and every level best first. */
export interface BookState {
  exchange: string | undefined;
  ticker: string | undefined;
  /** The moment the book stands at (the last applied delta's ts, else the snapshot's); undefined when empty. */
  ts: string | undefined;
  snapshot_ts: string | undefined;
  last_sequence: number | undefined;
  bids: Level[];
  asks: Level[];
}

export class OrderBook {
  private readonly bidSide = new BookSide(true, 'bid');
  private readonly askSide = new BookSide(false, 'ask');
  /** Epoch ms the book stands at (-Infinity before a snapshot). */
  private at = -Infinity;
  private snapshotAt = -Infinity;
  private lastSeq = -1;
  /**
   * Σ quantity · weight over the levels (the book digest before its reduction: digest.ts), kept delta by delta once
   * `digest()` was asked for; undefined until then (a book nobody digests pays nothing for it).
   */
  private sum: bigint | undefined = undefined;
  /** A moment is open: deltas of `at` were applied and its cross check is still due. */
  private open = false;
  private readonly checkCrossed: boolean;

  constructor(private readonly options: OrderBookOptions = {}) {
    this.checkCrossed = options.checkCrossed ?? true;
  }

  /** A book from the rows of one snapshot (all with one `ts`). */
  static fromSnapshot(rows: Iterable<SnapshotRow>, options?: OrderBookOptions): OrderBook {
    const book = new OrderBook(options);
    book.loadSnapshot(rows);
    return book;
  }

  /**
   * Rule 7 from rows at hand: the snapshot's rows, then the deltas (sorted here by `ts`, then `sequence`; deltas
   * before the snapshot's `ts` are an `out_of_order` error). The book is settled (cross-checked) at the end.
   */
  static fromRows(snapshot: Iterable<SnapshotRow>, deltas: Iterable<DeltaRow>, options?: OrderBookOptions): OrderBook {
    const book = OrderBook.fromSnapshot(snapshot, options);
    const sorted = [...deltas]
      .map((d) => ({ d, t: rowTs(d.ts, d) }))
      .sort((a, b) => a.t - b.t || a.d.sequence - b.d.sequence);
    for (const { d } of sorted) book.apply(d);
    book.settle();
    return book;
  }

  /**
   * Replaces the book with a snapshot: the rows of one book, all with the same `ts`. A snapshot with no rows is an
   * empty book at no moment; give `ts` to place it (the service writes no rows for an empty book).
   */
  loadSnapshot(rows: Iterable<SnapshotRow>, ts?: number): void {
    this.bidSide.clear();
    this.askSide.clear();
    this.sum = undefined;
    let at = ts ?? -Infinity;
    let first: string | undefined;
    for (const row of rows) {
      if (first === undefined) {
        first = row.ts;
        at = rowTs(row.ts, row);
      } else if (row.ts !== first) {
        throw new BookError('out_of_order', `snapshot rows of two moments (${first} and ${row.ts}) given as one book`, {
          ...this.where(),
          ts: rowTs(row.ts, row),
        });
      }
      const side = this.side(row.side, row);
      const q = quantity(row.quantity, row);
      const price = priceKey(row.price, row);
      if (q < 0n) {
        throw new BookError('negative_level', `snapshot level with quantity ${row.quantity}`, {
          ...this.where(),
          ts: at,
          side: row.side,
          price,
        });
      }
      const existing = side.byPrice.get(price);
      if (existing) {
        throw new BookError('out_of_order', 'snapshot lists a price twice', {
          ...this.where(),
          ts: at,
          side: row.side,
          price,
        });
      }
      if (q > 0n) side.insert(newLevel(price, q));
    }
    this.at = at;
    this.snapshotAt = at;
    this.lastSeq = -1;
    this.lastTsText = undefined;
    this.open = true;
    this.settle();
  }

  /**
   * Applies one delta. Deltas must come in (ts, sequence) order and not before the snapshot; a delta of a later
   * `ts` first settles the moment before it (cross check).
   */
  apply(delta: DeltaRow): void {
    this.applyAt(delta, delta.ts === this.lastTsText ? this.at : this.tsOf(delta));
  }

  /** @internal `apply` with the delta's `ts` already read (epoch ms): the stream readers parse it once. */
  applyAt(delta: DeltaRow, ts: number): void {
    // Everything is checked before anything changes: a refused delta leaves the book as it was.
    const later = ts !== this.at;
    if (this.snapshotAt === -Infinity) {
      throw new BookError('no_snapshot', 'a delta applied before any snapshot', this.deltaWhere(delta, ts));
    }
    if (later && ts < this.at) {
      throw new BookError(
        'out_of_order',
        `delta at ${delta.ts} is older than the book (${formatTimestamp(this.at)})`,
        this.deltaWhere(delta, ts),
      );
    }
    if (!later && delta.sequence <= this.lastSeq) {
      throw new BookError(
        'out_of_order',
        `sequence ${delta.sequence} after ${this.lastSeq} at the same ts`,
        this.deltaWhere(delta, ts),
      );
    }
    const side =
      delta.side === 'bid' ? this.bidSide : delta.side === 'ask' ? this.askSide : this.side(delta.side, delta);
    const change = quantity(delta.quantity_delta, delta);
    let level = side.byPrice.get(delta.price);
    let key = delta.price;
    if (level === undefined) {
      key = priceKey(delta.price, delta);
      level = side.byPrice.get(key);
    }
    const q = (level?.q ?? 0n) + change;
    if (q < 0n) {
      throw new BookError(
        'negative_level',
        level
          ? `delta ${delta.quantity_delta} takes the level from ${formatUnits(level.q, SCALE)} to ${formatUnits(q, SCALE)}`
          : `delta ${delta.quantity_delta} at a price with no level`,
        this.deltaWhere(delta, ts),
      );
    }
    // A delta of a later moment first settles the moment before it (its cross check).
    if (later) {
      if (this.open) this.settle();
      this.at = ts;
    }
    if (this.lastTsText !== delta.ts) this.lastTsText = delta.ts;
    this.lastSeq = delta.sequence;
    this.open = true;
    if (level === undefined) {
      if (q > 0n) side.insert((level = newLevel(key, q)));
    } else if (q > 0n) {
      level.q = q;
      level.text = undefined;
      level.line = undefined;
    } else side.remove(level);
    // A kept digest moves by this delta's own change at its level, whatever the level held (digest.ts).
    if (level !== undefined && this.sum !== undefined) this.sum += change * side.weightOf(level);
  }

  /**
   * The book digest (digest.ts): Σ quantity · weight over the levels modulo 2^61 − 1, as decimal text — what the
   * history service's `format=digest` gives for each recorded snapshot. The first call sums the levels; from then on
   * the book keeps it current as deltas apply (one multiplication each), so asking again costs one reduction.
   */
  digest(): string {
    if (this.sum === undefined) {
      let sum = 0n;
      for (const side of [this.bidSide, this.askSide]) {
        for (const level of side.sorted) sum += level.q * side.weightOf(level);
      }
      this.sum = sum;
    }
    return digestText(this.sum);
  }

  /** Applies deltas in order (see `apply`). */
  applyAll(deltas: Iterable<DeltaRow>): void {
    for (const d of deltas) this.apply(d);
  }

  /**
   * Ends the current moment: checks that the book is not crossed (best bid ≥ best ask is `crossed_book`).
   * Called by `apply` when a later moment starts; call it after the last delta you apply.
   */
  settle(): void {
    this.open = false;
    if (!this.checkCrossed) return;
    const bid = this.bidSide.sorted[0];
    const ask = this.askSide.sorted[0];
    if (bid && ask && bid.approx >= ask.approx && compareCanonical(bid.price, ask.price) >= 0) {
      throw new BookError('crossed_book', `best bid ${bid.price} is at or above best ask ${ask.price}`, {
        ...this.where(),
        ts: this.at === -Infinity ? undefined : this.at,
      });
    }
  }

  /** Bids, best (highest) first; the top `n` when given. */
  bids(n?: number): Level[] {
    return this.bidSide.levels(n);
  }

  /** Asks, best (lowest) first; the top `n` when given. */
  asks(n?: number): Level[] {
    return this.askSide.levels(n);
  }

  best(): Best {
    const bid = this.bidSide.sorted[0];
    const ask = this.askSide.sorted[0];
    return { bid: bid && view(bid), ask: ask && view(ask) };
  }

  /** Best ask − best bid, exactly; undefined when a side is empty. */
  spread(): string | undefined {
    const bid = this.bidSide.sorted[0];
    const ask = this.askSide.sorted[0];
    return bid && ask ? Decimal.parse(ask.price).sub(bid.price).toString() : undefined;
  }

  /** (best bid + best ask) / 2, exactly; undefined when a side is empty. */
  mid(): string | undefined {
    const bid = this.bidSide.sorted[0];
    const ask = this.askSide.sorted[0];
    return bid && ask ? Decimal.parse(ask.price).add(bid.price).half().toString() : undefined;
  }

  /** Levels on a side (or both). */
  depth(side?: Side): number {
    return side === 'bid'
      ? this.bidSide.sorted.length
      : side === 'ask'
        ? this.askSide.sorted.length
        : this.bidSide.sorted.length + this.askSide.sorted.length;
  }

  /** The quantity at a price (canonical text), or undefined when there is no level. */
  quantityAt(side: Side, price: string): string | undefined {
    const level = (side === 'bid' ? this.bidSide : this.askSide).byPrice.get(canonicalDecimal(price));
    return level && view(level).quantity;
  }

  /** The documented checksum of the top `depth` levels (checksum.ts). */
  checksum(depth = 25): number {
    return bookChecksum(this.bids(depth), this.asks(depth), depth);
  }

  /** Epoch ms the book stands at: the last applied delta's `ts`, else the snapshot's; undefined before one. */
  get ts(): number | undefined {
    return this.at === -Infinity ? undefined : this.at;
  }

  /** Epoch ms of the snapshot the book was built from. */
  get snapshotTs(): number | undefined {
    return this.snapshotAt === -Infinity ? undefined : this.snapshotAt;
  }

  /** `sequence` of the last delta applied at `ts` (undefined when none since the moment began). */
  get lastSequence(): number | undefined {
    return this.lastSeq < 0 ? undefined : this.lastSeq;
  }

  /**
   * Whether the rows of a snapshot hold exactly this book's levels, by value (what `replay` checks at every recorded
   * snapshot, without building a second book). Rows must be valid snapshot rows.
   */
  equalsSnapshot(rows: Iterable<SnapshotRow>): boolean {
    const mark = ++OrderBook.marks;
    let levels = 0;
    for (const row of rows) {
      const side = this.side(row.side, row);
      const level = side.byPrice.get(row.price) ?? side.byPrice.get(priceKey(row.price, row));
      // The quantity's canonical text (kept while the level is unchanged) equal to the row's: the same value, with
      // no BigInt. Anything else — another spelling, a zero row, a difference — is compared by value.
      if (level === undefined || level.mark === mark || view(level).quantity !== row.quantity) {
        const q = quantity(row.quantity, row);
        if (q === 0n) continue;
        if (level === undefined || level.q !== q || level.mark === mark) return false;
      }
      level.mark = mark;
      levels++;
    }
    return levels === this.bidSide.sorted.length + this.askSide.sorted.length;
  }

  /**
   * @internal `replay`: whether `lines` — a recorded snapshot's lines at `ts` (the service's text of it), each ending
   * in a newline — are exactly this book as the service writes one: bids, then asks, each by price ascending, every
   * field in canonical text. Equal text is the same book, compared in place with no row made; false says nothing
   * (another order, spelling or line ending, or a difference): `equalsSnapshot` then compares the rows by value.
   */
  matchesLines(lines: string, ts: string): boolean {
    // The book's text built whole and compared at once: one string comparison is several times cheaper than a
    // startsWith per line (micro-bench).
    const head = HEAD + ts;
    const parts: string[] = [];
    const bids = this.bidSide.sorted;
    for (let i = bids.length - 1; i >= 0; i--) parts.push(head, lineOf(bids[i] as LevelState, 'bid'));
    for (const level of this.askSide.sorted) parts.push(head, lineOf(level, 'ask'));
    return parts.join('') === lines;
  }

  /**
   * @internal `replay`: the book equals the snapshot recorded at `ts` (checked with `equalsSnapshot`), which it now
   * stands at, as if loaded from it.
   */
  passSnapshot(ts: number): void {
    this.settle();
    this.at = ts;
    this.snapshotAt = ts;
    this.lastSeq = -1;
    this.lastTsText = undefined;
  }

  private static marks = 0;

  /** Same levels with the same quantities (by value). */
  equals(other: OrderBook): boolean {
    return sameSide(this.bidSide, other.bidSide) && sameSide(this.askSide, other.askSide);
  }

  /** An independent copy. */
  clone(): OrderBook {
    const copy = new OrderBook(this.options);
    for (const [from, to] of [
      [this.bidSide, copy.bidSide],
      [this.askSide, copy.askSide],
    ] as const) {
      for (const l of from.sorted) {
        const c = { ...l, mark: 0 };
        to.byPrice.set(c.price, c);
        to.sorted.push(c);
      }
    }
    copy.at = this.at;
    copy.snapshotAt = this.snapshotAt;
    copy.lastSeq = this.lastSeq;
    copy.sum = this.sum;
    copy.open = this.open;
    copy.lastTsText = this.lastTsText;
    return copy;
  }

  /** The book as plain data (every level, or the top `depth`). */
  toJSON(depth?: number): BookState {
    return {
      exchange: this.options.exchange,
      ticker: this.options.ticker,
      ts: this.ts === undefined ? undefined : formatTimestamp(this.ts),
      snapshot_ts: this.snapshotTs === undefined ? undefined : formatTimestamp(this.snapshotTs),
      last_sequence: this.lastSequence,
      bids: this.bids(depth),
      asks: this.asks(depth),
    };
  }

  // -------------------------------------------------------------------------------------------------------------

  /** The text of the last delta's ts, so deltas that share it skip the parse. */
  private lastTsText: string | undefined;

  private tsOf(delta: DeltaRow): number {
    return rowTs(delta.ts, delta);
  }

  private side(side: string, row: object): BookSide {
    if (side === 'bid') return this.bidSide;
    if (side === 'ask') return this.askSide;
    throw new DataError('malformed_row', 'side is neither "bid" nor "ask"', { text: JSON.stringify(row) });
  }

  private where() {
    return { exchange: this.options.exchange, ticker: this.options.ticker };
  }

  private deltaWhere(delta: DeltaRow, ts: number) {
    return { ...this.where(), ts, sequence: delta.sequence, side: delta.side, price: delta.price };
  }
}

function rowTs(text: string, row: object): number {
  let ts = parseServiceTimestamp(text);
  if (Number.isNaN(ts)) ts = parseTimestamp(text);
  if (Number.isNaN(ts))
    throw new DataError('malformed_row', 'ts is not an RFC 3339 timestamp', { text: JSON.stringify(row) });
  return ts;
}

function quantity(text: string, row: object): bigint {
  const q = typeof text === 'string' ? parseScaled(text, SCALE) : undefined;
  if (q === undefined) {
    throw new DataError('invalid_decimal', `not a decimal with at most ${SCALE} fraction digits`, {
      text: JSON.stringify(row),
    });
  }
  return q;
}

function priceKey(text: string, row: object): string {
  if (typeof text === 'string' && isCanonicalDecimal(text)) return text;
  try {
    const key = canonicalDecimal(text);
    return key;
  } catch {
    throw new DataError('invalid_decimal', 'price is not a decimal', { text: JSON.stringify(row) });
  }
}

function sameSide(a: BookSide, b: BookSide): boolean {
  if (a.sorted.length !== b.sorted.length) return false;
  for (let i = 0; i < a.sorted.length; i++) {
    const x = a.sorted[i] as LevelState;
    const y = b.sorted[i] as LevelState;
    if (x.price !== y.price || x.q !== y.q) return false;
  }
  return true;
}
