/**
 * Turns ClickHouse's `TabSeparatedRaw` output — one JSON object per line — into the members of a JSON array, in
 * place and without parsing: each `\n` between rows becomes `,`, the final `\n` is dropped, rows are counted by
 * counting newlines. State carries across chunks and across the several queries of one response (time windows),
 * so their outputs join into one array.
 *
 * It also guards the stream: every row must start with `{`. When ClickHouse fails after it has started sending
 * (a time limit reached mid-stream, a killed query), it appends the exception text to the body with status 200
 * already sent; that text does not start with `{`, and the stream is rejected instead of passed on as data.
 *
 * For snapshots it can hold rows back (`holdFrom`) and then pass on only those of one book (`releaseBook`): every
 * row starts with `{"ts":"YYYY-MM-DDTHH:MM:SS.mmmZ"` (32 bytes), so rows of one book share their first 32 bytes.
 */
export class CorruptStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CorruptStreamError';
  }
}

const NEWLINE = 0x0a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const SEPARATOR = Buffer.from([COMMA]);
/** `{"ts":"2026-03-26T14:00:01.193Z"`: identical for every row of one book. */
export const TS_PREFIX_BYTES = 32;

function countNewlines(chunk: Buffer): number {
  let n = 0;
  for (let i = chunk.indexOf(NEWLINE); i !== -1; i = chunk.indexOf(NEWLINE, i + 1)) n++;
  return n;
}

export class JsonLinesToArray {
  /** Rows passed on so far. */
  rows = 0;
  /** Rows received so far (passed on, held or dropped). */
  received = 0;
  /** True between a row's newline and the next byte. */
  private atLineStart = true;
  private anyRow = false;
  /** When set, the row with this index (0-based, over all received rows) and every later one are held back. */
  private holdIndex: number | undefined;
  private held: Buffer[] | undefined;

  /**
   * Transforms one chunk (the buffer is modified and may be returned as a view). Returns the bytes to send, which
   * may be empty. Throws CorruptStreamError when a line does not start with `{`.
   */
  push(chunk: Buffer): Buffer[] {
    if (chunk.length === 0) return [];
    if (this.held) {
      this.held.push(chunk);
      this.received += countNewlines(chunk);
      return [];
    }
    const out: Buffer[] = [];
    if (this.atLineStart) {
      if (chunk[0] !== OPEN_BRACE) throw new CorruptStreamError(describe(chunk, 0));
      if (this.received === this.holdIndex) {
        this.hold(chunk);
        return out;
      }
      if (this.anyRow) out.push(SEPARATOR);
      this.atLineStart = false;
      this.anyRow = true;
    }
    let i = chunk.indexOf(NEWLINE);
    while (i !== -1) {
      this.rows++;
      this.received++;
      if (i + 1 === chunk.length) {
        // The row ends exactly at the chunk's end: hold the separator until another row arrives.
        this.atLineStart = true;
        chunk = chunk.subarray(0, i);
        break;
      }
      if (chunk[i + 1] !== OPEN_BRACE) throw new CorruptStreamError(describe(chunk, i + 1));
      if (this.received === this.holdIndex) {
        out.push(chunk.subarray(0, i));
        this.atLineStart = true;
        this.hold(chunk.subarray(i + 1));
        return out;
      }
      chunk[i] = COMMA;
      i = chunk.indexOf(NEWLINE, i + 1);
    }
    if (chunk.length > 0) out.push(chunk);
    return out;
  }

  /** The end of one query's output: it must end at a row boundary. */
  endOfQuery(): void {
    if (!this.held && !this.atLineStart) throw new CorruptStreamError('the result ended in the middle of a row');
  }

  /** Rows received from index `index` on (0-based, over the whole response) are held back, not passed on. */
  holdFrom(index: number): void {
    this.holdIndex = index;
  }

  /**
   * Ends holding. Passes on the first held row and every following held row of the same book (same ts); drops the
   * rest. When no row of a later book was held and `mayHaveMore` (the query stopped at its LIMIT), the book may
   * continue beyond what was received: nothing is passed on and `complete` is false.
   */
  releaseBook(mayHaveMore: boolean): { complete: boolean; out: Buffer[] } {
    const held = this.held;
    this.held = undefined;
    this.holdIndex = undefined;
    if (!held) return { complete: true, out: [] };
    const tail = Buffer.concat(held);
    if (tail.length === 0) return { complete: !mayHaveMore, out: [] };
    if (tail[tail.length - 1] !== NEWLINE) throw new CorruptStreamError('the result ended in the middle of a row');
    let end = 0;
    let included = 0;
    let otherBook = false;
    for (let s = 0; s < tail.length;) {
      if (tail[s] !== OPEN_BRACE) throw new CorruptStreamError(describe(tail, s));
      const nl = tail.indexOf(NEWLINE, s);
      if (included > 0 && tail.compare(tail, 0, TS_PREFIX_BYTES, s, s + TS_PREFIX_BYTES) !== 0) {
        otherBook = true;
        break;
      }
      included++;
      end = nl;
      s = nl + 1;
    }
    if (!otherBook && mayHaveMore) return { complete: false, out: [] };
    const rows = tail.subarray(0, end);
    for (let i = rows.indexOf(NEWLINE); i !== -1; i = rows.indexOf(NEWLINE, i + 1)) rows[i] = COMMA;
    const out = this.anyRow ? [SEPARATOR, rows] : [rows];
    this.anyRow = true;
    this.atLineStart = true;
    this.rows += included;
    return { complete: true, out };
  }

  private hold(rest: Buffer): void {
    this.held = [rest];
    this.received += countNewlines(rest);
  }
}

function describe(chunk: Buffer, at: number): string {
  const text = chunk
    .subarray(at, at + 200)
    .toString('utf8')
    .replace(/\s+/g, ' ')
    .trim();
  return `unexpected data in the result stream: ${text}`;
}
