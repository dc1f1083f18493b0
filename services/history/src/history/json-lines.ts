/**
 * Turns ClickHouse's `TabSeparatedRaw` output — one JSON object per line — into the members of a JSON array, in
 * place and without parsing: each `\n` between rows becomes `,`, the final `\n` is dropped, rows are counted by
 * counting newlines. State carries across chunks and across the several queries of one response (time windows),
 * so their outputs join into one array.
 *
 * It also guards the stream: every row must start with `{`. When ClickHouse fails after it has started sending
 * (a time limit reached mid-stream, a killed query), it appends the exception text to the body with status 200
 * already sent; that text does not start with `{`, and the stream is rejected instead of passed on as data.
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

export class JsonLinesToArray {
  /** Rows completed so far (lines ended by a newline). */
  rows = 0;
  /** True between a row's newline and the next byte. */
  private atLineStart = true;
  private anyRow = false;

  /**
   * Transforms one chunk (the buffer is modified and may be returned as a view). Returns the bytes to send, which
   * may be empty. Throws CorruptStreamError when a line does not start with `{`.
   */
  push(chunk: Buffer): Buffer[] {
    if (chunk.length === 0) return [];
    const out: Buffer[] = [];
    if (this.atLineStart) {
      if (chunk[0] !== OPEN_BRACE) throw new CorruptStreamError(describe(chunk, 0));
      if (this.anyRow) out.push(SEPARATOR);
      this.atLineStart = false;
      this.anyRow = true;
    }
    let i = chunk.indexOf(NEWLINE);
    while (i !== -1) {
      this.rows++;
      if (i + 1 === chunk.length) {
        // The row ends exactly at the chunk's end: hold the separator until another row arrives.
        this.atLineStart = true;
        chunk = chunk.subarray(0, i);
        break;
      }
      if (chunk[i + 1] !== OPEN_BRACE) throw new CorruptStreamError(describe(chunk, i + 1));
      chunk[i] = COMMA;
      i = chunk.indexOf(NEWLINE, i + 1);
    }
    if (chunk.length > 0) out.push(chunk);
    return out;
  }

  /** The end of one query's output: it must end at a row boundary. */
  endOfQuery(): void {
    if (!this.atLineStart) throw new CorruptStreamError('the result ended in the middle of a row');
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
