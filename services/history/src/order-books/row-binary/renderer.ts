/**
 * The row renderer: turns the RowBinary output of one or more window queries, chunk by chunk, into the rows of the
 * answer (members of a JSON array, NDJSON lines or CSV lines), in a scratch buffer shared by the process.
 *
 * It guards the stream. When ClickHouse fails after it started sending (a time limit reached, a killed query), it
 * appends the exception text to a body already sent with status 200. Every row carries a byte that can only be 1 or
 * 2 (`side`) and a timestamp that must fall between 1970 and 9999; exception text is printable ASCII, so the first
 * row it overlaps fails those checks, and a result that does not end on a row boundary is rejected at its end.
 *
 * It can hold rows back (`holdFrom`, `takeHeld`) so that its caller passes on only some of them (`pass`): the rest of
 * one book (the never-cut-a-book rule, `cutAtBook`, applied by the order-book reader), or none (the look-ahead row
 * that tells a delta page it was cut). It remembers the key of the last row it passed on (`lastKey`: ts, sequence and
 * how many rows in a row carried them), where a next page continues. And it places gap markers among the rows
 * (`setMarkers`): a marker at F goes after every row with ts ≤ F and before the first with ts > F.
 */
import {
  FIELD_RECEIVED,
  FIELD_SEQUENCE,
  FIELD_VENUE_SEQ,
  FIELD_VENUE_SIDE,
  layoutOf,
  MAX_TS,
  MAX_VENUE_TEXT,
  rowLength,
  SIDE_ASK,
  SIDE_BID,
  stringText,
  type Layout,
  type RowKey,
  type SeriesKind,
  type TextFormat,
} from './layouts';
import { copy, i32, readTs, TWO_32, u32 } from './text';

/** Bytes that cannot be rows: an exception text ClickHouse appended to its output, or a result cut inside a row. */
export class CorruptStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CorruptStreamError';
  }
}

const COMMA = 0x2c;
const NEWLINE = 0x0a;

/**
 * Rendering space shared by every converter of the process: `push` renders into it and copies the result out before
 * returning, so it is never in use across an await. Grows to the largest chunk seen.
 */
let scratch = Buffer.allocUnsafe(256 * 1024);

/**
 * Where the rows of a columnar answer go instead of text (Parquet: parquet.ts). `add` takes one row of the JSON
 * layout; `take` the encoded bytes ready to be sent, if any.
 */
export interface ColumnarSink {
  add(src: Buffer, o: number): void;
  take(): Buffer | undefined;
}

export interface RenderOptions {
  /** Default `json`: members of an array, comma-separated. `ndjson` and `csv`: one line per row. */
  format?: TextFormat;
  /** Rows carry `received_ts` after their own columns (RowBinary and text). */
  receivedTs?: boolean;
  /** Trades: rows carry `venue_side` (after received_ts), rendered after it. */
  venueSide?: boolean;
  /** Trades: `sequence` is rendered (it is always read). */
  sequence?: boolean;
  /** Rows carry `venue_seq` (a FixedString after received_ts), rendered last. */
  venueSeq?: boolean;
  /** The rows go to this sink (a columnar format) instead of being rendered as text. */
  columnar?: ColumnarSink;
}

export class RowRenderer {
  /** Rows passed on so far. */
  rows = 0;
  /** Rows received so far (passed on, held or dropped). */
  received = 0;
  /** The layout of the rows (their fixed part, for layouts with Strings). */
  readonly layout: Layout;
  /** Gap markers placed so far (written, for line formats; only counted for JSON). */
  markersPassed = 0;
  readonly size: number;
  private readonly lines: boolean;
  /** The start of a row split across chunks. */
  private readonly carry: Buffer;
  private readonly columnar: ColumnarSink | undefined;
  private carried = 0;
  /** Layouts with Strings: where the last scan stopped (the first row not whole). */
  private scanned = 0;
  private anyRow = false;
  /** When set, the row with this index (0-based, over all received rows) and every later one are held back. */
  private holdIndex: number | undefined;
  private held: Buffer[] | undefined;
  /** The last row passed on: its ts and sequence (two 32-bit halves), and how many rows in a row carried them. */
  private lastTs = -1;
  private lastSeqHi = 0;
  private lastSeqLo = 0;
  private lastRun = 0;
  /** Gap markers: their ts (F) in order, and their text for line formats. */
  private markerTs: readonly number[] = [];
  private markerText: readonly Buffer[] | undefined;
  private nextMarkerTs = Infinity;
  /** Bytes of the marker text not yet placed: reserved in the scratch with the rows. */
  private markerBytesLeft = 0;

  constructor(
    private readonly kind: SeriesKind,
    options: RenderOptions = {},
  ) {
    const format = options.format ?? 'json';
    const fields =
      (options.receivedTs === true ? FIELD_RECEIVED : 0) |
      (options.venueSide === true ? FIELD_VENUE_SIDE : 0) |
      (options.sequence === true ? FIELD_SEQUENCE : 0) |
      (options.venueSeq === true ? FIELD_VENUE_SEQ : 0);
    this.layout = layoutOf(kind, format, fields);
    this.size = this.layout.size;
    this.columnar = options.columnar;
    this.lines = format !== 'json' && this.columnar === undefined;
    // A row of a layout with Strings is at most its fixed part and its Strings at their longest.
    this.carry = Buffer.alloc(this.layout.size + this.layout.strings * (2 + MAX_VENUE_TEXT));
  }

  /**
   * Gap markers to place among the rows: `ts` (each a gap's from_ts, ascending) and, for line formats, the text of
   * each (one line each). A marker goes after every row with ts ≤ its ts and before the first with ts > it; for JSON
   * they are only counted (`markersPassed`), the caller lists them apart.
   */
  setMarkers(ts: readonly number[], text?: readonly Buffer[]): void {
    this.markerTs = ts;
    this.markerText = this.lines ? text : undefined;
    this.nextMarkerTs = ts[this.markersPassed] ?? Infinity;
    this.markerBytesLeft = (this.markerText ?? []).slice(this.markersPassed).reduce((n, t) => n + t.length, 0);
  }

  /** Places every marker not yet placed (the end of a complete answer): their text for line formats. */
  passRemainingMarkers(): Buffer | undefined {
    const from = this.markersPassed;
    this.markersPassed = this.markerTs.length;
    this.nextMarkerTs = Infinity;
    this.markerBytesLeft = 0;
    if (!this.markerText || from >= this.markerText.length) return undefined;
    return Buffer.concat(this.markerText.slice(from));
  }

  /**
   * Converts one chunk of RowBinary output, or several one after another. Returns the text to send (JSON: rows separated by commas, a comma before
   * the first when rows went out before; line formats: a line per row), or undefined when there is none yet: in
   * `into` when it is long enough (a buffer the caller no longer needs), else in a new buffer. Throws
   * CorruptStreamError on bytes that cannot be a row.
   */
  push(input: Buffer | readonly Buffer[], into?: Buffer): Buffer | undefined {
    let p = 0;
    const take = this.layout.strings === 0 ? this.take : this.takeVariable;
    if (Buffer.isBuffer(input)) p = take.call(this, input, p);
    else for (const chunk of input) p = take.call(this, chunk, p);
    if (this.columnar) return this.columnar.take();
    if (p === 0) return undefined;
    const out = into !== undefined && into.length >= p ? into.subarray(0, p) : Buffer.allocUnsafe(p);
    scratch.copy(out, 0, 0, p);
    return out;
  }

  /** Renders the whole rows of `chunk` (and the one it completes) into the scratch from `p` on; the new end. */
  private take(chunk: Buffer, p: number): number {
    const size = this.layout.size;
    let start = 0;
    if (this.carried > 0) {
      const take = Math.min(size - this.carried, chunk.length);
      chunk.copy(this.carry, this.carried, 0, take);
      this.carried += take;
      if (this.carried < size) return p;
      this.carried = 0;
      start = take;
      p = this.rowsAt(Buffer.from(this.carry), 0, 1, p);
    }
    const whole = Math.floor((chunk.length - start) / size);
    p = this.rowsAt(chunk, start, whole, p);
    const rest = start + whole * size;
    if (rest < chunk.length) {
      chunk.copy(this.carry, 0, rest);
      this.carried = chunk.length - rest;
    }
    return p;
  }

  /**
   * `take` for layouts with Strings: a row ends where its last String does. A row split across chunks is gathered
   * in the carry (which holds a row at its longest) until it is whole.
   */
  private takeVariable(chunk: Buffer, p: number): number {
    let start = 0;
    if (this.carried > 0) {
      const before = this.carried;
      const filled = before + chunk.copy(this.carry, before, 0, Math.min(this.carry.length - before, chunk.length));
      const length = rowLength(this.layout, this.carry, 0, filled);
      if (length === -2 || (length === -1 && filled === this.carry.length))
        throw new CorruptStreamError(`unexpected data in the result stream: ${describe(this.carry, 0)}`);
      if (length === -1) {
        this.carried = filled;
        return p;
      }
      this.carried = 0;
      // A copy: held rows may point into what is passed.
      p = this.rowsAtVariable(Buffer.from(this.carry.subarray(0, length)), 0, length, p);
      start = length - before;
    }
    p = this.rowsAtVariable(chunk, start, chunk.length, p);
    const rest = this.scanned;
    if (rest < chunk.length) {
      chunk.copy(this.carry, 0, rest);
      this.carried = chunk.length - rest;
    }
    return p;
  }

  /**
   * `rowsAt` for layouts with Strings: takes the whole rows of `src[start, end)` (where the first one not whole
   * begins: `scanned`); each row's key is compared with the last one passed on as it goes (runs of one key).
   */
  private rowsAtVariable(src: Buffer, start: number, end: number, p: number): number {
    const layout = this.layout;
    const { side, kind } = layout;
    this.ensureScratchFor(end - start, p);
    let o = start;
    while (o < end) {
      const length = rowLength(layout, src, o, end);
      if (length === -1) break;
      const s = src[o + side];
      const k = kind < 0 ? SIDE_BID : src[o + kind];
      const hi = i32(src, o + 4);
      if (
        length === -2 ||
        (s !== SIDE_BID && s !== SIDE_ASK) ||
        (k !== SIDE_BID && k !== SIDE_ASK) ||
        hi < 0 ||
        hi * TWO_32 + (i32(src, o) >>> 0) > MAX_TS
      )
        throw new CorruptStreamError(`unexpected data in the result stream: ${describe(src, o)}`);
      if (this.held) this.held.push(src.subarray(o, o + length));
      else if (this.received === this.holdIndex) this.held = [src.subarray(o, o + length)];
      else {
        p = this.renderRow(src, o, p);
        // The key (ts, sequence) of the row passed on, and the run of rows that carried it.
        const lo = i32(src, o) >>> 0;
        const seqLo = i32(src, o + 8) >>> 0;
        const seqHi = i32(src, o + 12) >>> 0;
        const ts = hi * TWO_32 + lo;
        if (ts === this.lastTs && seqLo === this.lastSeqLo && seqHi === this.lastSeqHi) this.lastRun++;
        else {
          this.lastTs = ts;
          this.lastSeqLo = seqLo;
          this.lastSeqHi = seqHi;
          this.lastRun = 1;
        }
      }
      this.received++;
      o += length;
    }
    this.scanned = o;
    return p;
  }

  /** The end of one query's output: it must end at a row boundary. */
  endOfQuery(): void {
    if (this.carried > 0) {
      const partial = this.carry.subarray(0, this.carried);
      this.carried = 0;
      throw new CorruptStreamError(`the result ended in the middle of a row: ${describe(partial, 0)}`);
    }
  }

  /** Rows received from index `index` on (0-based, over the whole response) are held back, not passed on. */
  holdFrom(index: number): void {
    this.holdIndex = index;
  }

  /**
   * Ends holding: the rows held back since `holdFrom` (whole rows, raw), or undefined when no row reached the hold
   * index. Nothing of them has been passed on or counted in `rows`.
   */
  takeHeld(): Buffer | undefined {
    const held = this.held;
    this.held = undefined;
    this.holdIndex = undefined;
    if (!held) return undefined;
    return held.length === 1 ? (held[0] as Buffer) : Buffer.concat(held);
  }

  /** Passes on the first `count` of raw rows (as `push` passes rows on): their text. Layouts without Strings. */
  pass(raw: Buffer, count: number): Buffer {
    if (this.layout.strings > 0) throw new Error('pass: rows of a fixed width only');
    this.ensureScratch(count);
    let p = 0;
    for (let i = 0; i < count; i++) p = this.renderRow(raw, i * this.layout.size, p);
    this.noteLastKey(raw, 0, count);
    const out = Buffer.allocUnsafe(p);
    scratch.copy(out, 0, 0, p);
    return out;
  }

  /**
   * The key of the last row passed on, and how many rows passed on in a row carried it (a next page resumes there,
   * leaving those out); undefined when none was.
   */
  lastKey(): (RowKey & { run: number }) | undefined {
    if (this.lastTs < 0) return undefined;
    return {
      ts: this.lastTs,
      sequence: this.kind !== 'snapshot' ? (BigInt(this.lastSeqHi) << 32n) | BigInt(this.lastSeqLo) : 0n,
      run: this.lastRun,
    };
  }

  /** Takes `count` whole rows from `src[start]`: renders them into the scratch from `p` on, or holds them. */
  private rowsAt(src: Buffer, start: number, count: number, p: number): number {
    const { size, side } = this.layout;
    this.ensureScratch(count, p);
    let rendered = 0;
    for (let i = 0, o = start; i < count; i++, o += size) {
      const s = src[o + side];
      const hi = i32(src, o + 4);
      if ((s !== SIDE_BID && s !== SIDE_ASK) || hi < 0 || hi * TWO_32 + (i32(src, o) >>> 0) > MAX_TS)
        throw new CorruptStreamError(`unexpected data in the result stream: ${describe(src, o)}`);
      if (this.held) this.held.push(src.subarray(o, o + size));
      else if (this.received === this.holdIndex) this.held = [src.subarray(o, o + size)];
      else {
        p = this.renderRow(src, o, p);
        rendered++;
      }
      this.received++;
    }
    // The rows passed on come first (holding starts after them).
    this.noteLastKey(src, start, rendered);
    // Held rows may point into `src`; when it is the carry, it was copied first (push).
    return p;
  }

  private renderRow(src: Buffer, o: number, p: number): number {
    if (this.markerTs.length > 0) {
      const ts = readTs(src, o);
      if (ts > this.nextMarkerTs) p = this.placeMarkers(ts, p);
    }
    const layout = this.layout;
    if (this.lines) {
      p = layout.render(src, o, scratch, p, layout.fields);
      scratch[p++] = NEWLINE;
    } else if (this.columnar) this.columnar.add(src, o);
    else {
      if (this.anyRow) scratch[p++] = COMMA;
      p = layout.render(src, o, scratch, p, layout.fields);
    }
    this.anyRow = true;
    this.rows++;
    return p;
  }

  /**
   * Notes the key of the last of `count` rows passed on from `src[start]` (one after another), and how many rows in a
   * row carried it: counted back from the last, on to the rows passed on before when all of these carry it.
   */
  private noteLastKey(src: Buffer, start: number, count: number): void {
    if (count === 0) return;
    const size = this.layout.size;
    const last = start + (count - 1) * size;
    const keyBytes = this.kind !== 'snapshot' ? 16 : 8;
    let run = 1;
    while (
      run < count &&
      src.compare(src, last - run * size, last - run * size + keyBytes, last, last + keyBytes) === 0
    )
      run++;
    const ts = readTs(src, last);
    const seqLo = this.kind !== 'snapshot' ? u32(src, last + 8) : 0;
    const seqHi = this.kind !== 'snapshot' ? u32(src, last + 12) : 0;
    const continues = run === count && ts === this.lastTs && seqLo === this.lastSeqLo && seqHi === this.lastSeqHi;
    this.lastRun = continues ? this.lastRun + run : run;
    this.lastTs = ts;
    this.lastSeqLo = seqLo;
    this.lastSeqHi = seqHi;
  }

  /**
   * Places the markers whose ts is below `ts` (the next row's) at `scratch[p]` (room for them was reserved with the
   * rows'); returns the new end.
   */
  private placeMarkers(ts: number, p: number): number {
    while (ts > this.nextMarkerTs) {
      const text = this.markerText?.[this.markersPassed];
      if (text) {
        p = copy(text, scratch, p);
        this.markerBytesLeft -= text.length;
      }
      this.markersPassed++;
      this.nextMarkerTs = this.markerTs[this.markersPassed] ?? Infinity;
    }
    return p;
  }

  /**
   * Room in the scratch for the rows of `bytes` bytes of a layout with Strings (each row at least its fixed part and
   * a byte per String; every String byte written at most twice, with its quotes), and every marker not yet placed.
   */
  private ensureScratchFor(bytes: number, used: number): void {
    const layout = this.layout;
    const rows = Math.ceil(bytes / (layout.size + layout.strings));
    const need = used + rows * (layout.maxText + layout.strings * stringText(0)) + 2 * bytes + this.markerBytesLeft;
    if (scratch.length >= need) return;
    const bigger = Buffer.allocUnsafe(Math.max(need, scratch.length * 2));
    scratch.copy(bigger, 0, 0, used);
    scratch = bigger;
  }

  /** Room in the scratch for `rows` rows (and every marker not yet placed) after `used` bytes. */
  private ensureScratch(rows: number, used = 0): void {
    const need = used + rows * this.layout.maxText + this.markerBytesLeft;
    if (scratch.length >= need) return;
    const bigger = Buffer.allocUnsafe(Math.max(need, scratch.length * 2));
    scratch.copy(bigger, 0, 0, used);
    scratch = bigger;
  }
}

/** A readable excerpt of bytes that are not a row (typically ClickHouse's exception text). */
function describe(src: Buffer, at: number): string {
  const text = Buffer.from(src.subarray(at, at + 200))
    .toString('latin1')
    .replace(/[^\x20-\x7e]+/g, ' ')
    .trim();
  return text === '' ? '(binary data)' : text;
}
