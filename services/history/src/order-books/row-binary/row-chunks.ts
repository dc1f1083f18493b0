/**
 * The raw rows of one query, held in the chunks they arrived in. Not copied into one buffer: a bulk stream's
 * windows are a quarter of a million rows, and buffers that size, allocated window after window, were what the
 * process kept of its streams after they ended (malloc does not give back memory freed in the middle of its heap).
 *
 * Rows of a layout with Strings (trades) have a variable width: their ends are found as the chunks arrive (`add`)
 * and kept in a typed array (no object per row), so that rows can be counted, cut and picked as fixed ones are.
 */
import { rowLength, type Layout } from './layouts';

/**
 * Row ends are kept in segments of this many (8 KiB each). One array doubled as rows came was a 256 KiB allocation
 * for 20,000 trades, a "large" one that jemalloc, as the image runs it, gives back to the system between requests
 * and the next request faults in page by page: a third of such an answer's page faults (docs/benchmarks.md, "Warm-up
 * and the allocator").
 */
const END_SEGMENT_BITS = 10;
const END_SEGMENT = 1 << END_SEGMENT_BITS;
const END_SEGMENT_MASK = END_SEGMENT - 1;

export class RowChunks {
  readonly chunks: Buffer[] = [];
  bytes = 0;
  /** Bytes of a row of a fixed width; of the fixed part of a row with Strings. */
  readonly size: number;
  /** Layouts with Strings: the layout, and where each whole row found so far ends (offsets over all chunks). */
  private readonly variable: Layout | undefined;
  private readonly ends: Float64Array[] | undefined;
  private found = 0;
  /** Where the next row to find begins (over all chunks), and the chunk it begins in. */
  private next = 0;
  private nextChunk = 0;
  private nextChunkStart = 0;

  constructor(layout: Layout | number) {
    if (typeof layout === 'number') this.size = layout;
    else {
      this.size = layout.size;
      if (layout.strings > 0) {
        this.variable = layout;
        this.ends = [];
      }
    }
  }

  /** Whole rows held (an incomplete last one is not counted; the renderer rejects it). */
  get rows(): number {
    return this.variable ? this.found : Math.floor(this.bytes / this.size);
  }

  add(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    if (this.variable) this.findRows();
  }

  /** The first `rows` rows (sharing their bytes). */
  first(rows: number): RowChunks {
    const out = this.empty();
    let left = this.endOf(rows - 1);
    for (const chunk of this.chunks) {
      if (left <= 0) break;
      out.add(chunk.length <= left ? chunk : chunk.subarray(0, left));
      left -= chunk.length;
    }
    return out;
  }

  /** These rows, then those of `more`. */
  concat(more: RowChunks): RowChunks {
    const out = this.empty();
    for (const chunk of [...this.chunks, ...more.chunks]) out.add(chunk);
    return out;
  }

  /** Row `i`'s bytes (a view when they lie in one chunk, else a copy). */
  row(i: number): Buffer {
    return this.slice(this.endOf(i - 1), this.endOf(i));
  }

  /** Rows `from` to the last as one buffer (a copy when they span chunks). */
  from(i: number): Buffer {
    return this.slice(this.endOf(i - 1), this.endOf(this.rows - 1));
  }

  private empty(): RowChunks {
    return new RowChunks(this.variable ?? this.size);
  }

  /** Where row `i` ends (0 for i = -1). */
  private endOf(i: number): number {
    if (i < 0) return 0;
    return this.ends
      ? ((this.ends[i >> END_SEGMENT_BITS] as Float64Array)[i & END_SEGMENT_MASK] as number)
      : (i + 1) * this.size;
  }

  /** Finds the rows made whole by the chunks added so far. */
  private findRows(): void {
    const layout = this.variable as Layout;
    for (;;) {
      while (this.nextChunk < this.chunks.length) {
        const length = (this.chunks[this.nextChunk] as Buffer).length;
        if (this.next < this.nextChunkStart + length) break;
        this.nextChunkStart += length;
        this.nextChunk++;
      }
      if (this.nextChunk >= this.chunks.length) return;
      const chunk = this.chunks[this.nextChunk] as Buffer;
      const at = this.next - this.nextChunkStart;
      let length = rowLength(layout, chunk, at, chunk.length);
      if (length === -1 && this.nextChunk < this.chunks.length - 1) {
        // The row runs into the next chunks: look at it whole (a row is at most a few hundred bytes).
        const longest = layout.size + layout.strings * 130;
        const view = this.slice(this.next, Math.min(this.bytes, this.next + longest));
        length = rowLength(layout, view, 0, view.length);
      }
      // Not whole yet, or not a row: left for the renderer, which rejects what is not a row.
      if (length < 0) return;
      this.next += length;
      const ends = this.ends as Float64Array[];
      const slot = this.found & END_SEGMENT_MASK;
      if (slot === 0) ends.push(new Float64Array(END_SEGMENT));
      (ends[ends.length - 1] as Float64Array)[slot] = this.next;
      this.found++;
    }
  }

  private slice(begin: number, end: number): Buffer {
    let at = 0;
    let k = 0;
    while (k < this.chunks.length && at + (this.chunks[k] as Buffer).length <= begin)
      at += (this.chunks[k++] as Buffer).length;
    const first = this.chunks[k];
    if (first !== undefined && end - at <= first.length) return first.subarray(begin - at, end - at);
    const out = Buffer.allocUnsafe(end - begin);
    for (let p = 0; p < out.length && k < this.chunks.length; k++) {
      const chunk = this.chunks[k] as Buffer;
      const from = Math.max(0, begin - at);
      p += chunk.copy(out, p, from, Math.min(chunk.length, from + out.length - p));
      at += chunk.length;
    }
    return out;
  }
}
