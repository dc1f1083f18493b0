/**
 * `format=digest` on the snapshots stream: each recorded book as one NDJSON line instead of its rows —
 *
 *   {"ts":"2026-11-15T00:05:00.000Z","levels":65,"digest":"1894132580178927783"}
 *
 * its `ts`, its number of levels and its digest (@depthgate/client's digest.ts: Σ quantity · weight over the levels
 * modulo 2^61 − 1, the weight a hash of the side and canonical price). A client replaying deltas keeps the same digest
 * current with one multiplication a delta (`OrderBook.digest()`), so it verifies every recorded snapshot of a range
 * while reading one short line per book rather than every row (docs/history.md, "Book digests").
 *
 * The rows come as the snapshots stream reads them (whole books: a stream never cuts one), through the renderer's
 * columnar hook in the JSON layout; the stream's end line counts books, not rows.
 */
import { digestText, levelWeight } from '@depthgate/client';
import { int128, readTs, SIDE_BID, timestampText, writeDecimal18, type ColumnarSink } from './row-binary';

/** Offsets in a snapshot row (layouts.ts): ts Int64 | side Enum8 | price Decimal(38,18) | quantity Decimal(38,18). */
const SIDE = 8;
const PRICE = 9;
const QUANTITY = 25;

export class DigestStream implements ColumnarSink {
  /** Books whose line was written. */
  books = 0;
  /** The book at hand (-1: none): its ts, its levels (rows of quantity > 0), Σ quantity · weight. */
  private ts = -1;
  private levels = 0;
  private sum = 0n;
  private lines: string[] = [];
  /** Weights by side and price text (a ticker's prices recur from book to book). */
  private readonly weights = new Map<string, bigint>();
  private readonly price = Buffer.allocUnsafe(64);

  add(src: Buffer, o: number): void {
    const ts = readTs(src, o);
    if (ts !== this.ts) {
      this.close();
      this.ts = ts;
    }
    const quantity = int128(src, o + QUANTITY);
    // A row of quantity 0 is no level (the clients' books hold none): not counted, nothing to add.
    if (quantity === 0n) return;
    const side = src[o + SIDE] === SIDE_BID ? 'bid' : 'ask';
    const key = `${side}:${this.price.toString('latin1', 0, writeDecimal18(src, o + PRICE, this.price, 0))}`;
    const weight = this.weights.get(key) ?? this.weigh(side, key);
    this.sum += quantity * weight;
    this.levels++;
  }

  take(): Buffer | undefined {
    const text = this.drain();
    return text === '' ? undefined : Buffer.from(text, 'latin1');
  }

  /** The last book's line (the rows have all come); the text not yet taken. */
  finish(): string {
    this.close();
    return this.drain();
  }

  /** The lines written and not yet taken, as one text. */
  private drain(): string {
    const text = this.lines.join('');
    this.lines = [];
    return text;
  }

  private weigh(side: string, key: string): bigint {
    // Bounded as the client's cache is: a long stream over a fine price grid meets many prices.
    if (this.weights.size >= 65_536) this.weights.clear();
    const weight = levelWeight(side, key.slice(side.length + 1));
    this.weights.set(key, weight);
    return weight;
  }

  /** Writes the book at hand's line (a book of rows of quantity 0 only: levels 0, digest 0, an empty book). */
  private close(): void {
    if (this.ts < 0) return;
    this.lines.push(`{"ts":"${timestampText(this.ts)}","levels":${this.levels},"digest":"${digestText(this.sum)}"}\n`);
    this.books++;
    this.ts = -1;
    this.levels = 0;
    this.sum = 0n;
  }
}
