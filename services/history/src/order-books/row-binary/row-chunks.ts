/**
 * The raw rows of one query, held in the chunks they arrived in. Not copied into one buffer: a bulk stream's
 * windows are a quarter of a million rows, and buffers that size, allocated window after window, were what the
 * process kept of its streams after they ended (malloc does not give back memory freed in the middle of its heap).
 */
export class RowChunks {
  readonly chunks: Buffer[] = [];
  bytes = 0;

  constructor(readonly size: number) {}

  /** Whole rows held (an incomplete last one is not counted; the renderer rejects it). */
  get rows(): number {
    return Math.floor(this.bytes / this.size);
  }

  add(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.bytes += chunk.length;
  }

  /** The first `rows` rows (sharing their bytes). */
  first(rows: number): RowChunks {
    const out = new RowChunks(this.size);
    let left = rows * this.size;
    for (const chunk of this.chunks) {
      if (left <= 0) break;
      out.add(chunk.length <= left ? chunk : chunk.subarray(0, left));
      left -= chunk.length;
    }
    return out;
  }

  /** These rows, then those of `more`. */
  concat(more: RowChunks): RowChunks {
    const out = new RowChunks(this.size);
    for (const chunk of [...this.chunks, ...more.chunks]) out.add(chunk);
    return out;
  }

  /** Row `i`'s bytes (a view when they lie in one chunk, else a copy). */
  row(i: number): Buffer {
    return this.slice(i * this.size, (i + 1) * this.size);
  }

  /** Rows `from` to the last as one buffer (a copy when they span chunks). */
  from(i: number): Buffer {
    return this.slice(i * this.size, this.rows * this.size);
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
