/**
 * Splits a streamed body into lines (`\n`, an optional `\r` before it dropped), decoding UTF-8 as it goes, a chunk at a
 * time: each step gives the complete lines of the bytes received so far (at most BATCH_LINES of them; a larger chunk
 * gives several batches), so the readers above iterate arrays synchronously instead of awaiting once per line.
 * `complete` tells whether the body ended with a newline: a line format's last line always does, so a body that stops
 * inside a line was cut.
 */
import { DataError } from './errors.js';

/**
 * The complete lines of what arrived: line i is `text.slice(bounds[2i], bounds[2i + 1])` (without its newline).
 * Lines are not cut out of the text, so a reader that parses in place makes no string per line.
 */
export interface LineBatch {
  text: string;
  bounds: number[];
}

export interface LineSource {
  /** The complete lines of each chunk (never empty). */
  batches: AsyncGenerator<LineBatch>;
  /** After `batches` is done: whether the body ended on a line boundary. */
  complete(): boolean;
}

/**
 * The most lines a batch holds. A chunk can be a whole body (a `fetch` that buffers, a test's `Response`), and arrays
 * of tens of thousands of entries cost far more per entry than small ones: V8 places them in its large-object space,
 * where every regrowth is fresh memory faulted in page by page (2026-11-28, on the 2-core VM: 28,000 line bounds
 * pushed in 1.9–2.4 ms with 112 page faults, in batches of 2,048 in 0.16 ms with none; `bench/client/micro.mts` with
 * bodies in one chunk: the verified replay in 0.63–0.77× of its time before).
 */
export const BATCH_LINES = 2048;

export function splitLines(chunks: AsyncIterable<Uint8Array>, where: { url: string; requestId?: string }): LineSource {
  let complete = true;
  async function* batches(): AsyncGenerator<LineBatch> {
    const decoder = new TextDecoder('utf-8', { fatal: true });
    let rest = '';
    const decode = (chunk?: Uint8Array) => {
      try {
        return chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode();
      } catch {
        throw new DataError('malformed_body', 'the stream is not UTF-8 text', where);
      }
    };
    for await (const chunk of chunks) {
      const text = rest + decode(chunk);
      let start = 0;
      for (;;) {
        // At most BATCH_LINES lines a batch, however large the chunk.
        const bounds: number[] = [];
        while (bounds.length < 2 * BATCH_LINES) {
          const nl = text.indexOf('\n', start);
          if (nl < 0) break;
          bounds.push(start, nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl);
          start = nl + 1;
        }
        if (bounds.length === 0) break;
        yield { text, bounds };
        if (bounds.length < 2 * BATCH_LINES) break;
      }
      rest = start === 0 ? text : text.slice(start);
    }
    rest += decode();
    // A partial last line is never parsed: the caller reports the cut instead of a half row.
    complete = rest.length === 0;
  }
  return { batches: batches(), complete: () => complete };
}
