/**
 * The body of a snapshots/deltas response, written as the rows arrive:
 *
 *   {"exchange":"venue_b","ticker":"KX…","rows":[ …row, row… ],"count":N}
 *
 * `count` follows `rows` so nothing has to be held back: the number is known only once the last row went out
 * (JSON objects are unordered; docs/history.md says so). Headers and the opening bytes go out with the first row —
 * or at the end when there is none — so any failure before that can still be answered with a proper error status.
 */
import type { Response } from 'express';
import type { RowKind } from '@depthgate/history-store';
import { RowBinaryToJson } from './row-binary';

export class AbortedError extends Error {
  constructor() {
    super('the request was aborted');
    this.name = 'AbortError';
  }
}

export class RowsResponse {
  private readonly lines: RowBinaryToJson;
  private started = false;
  /** Called on the next 'drain'. One listener per response, never removed: the `compression` middleware forwards
   * `res.on('drain')` to its gzip stream but not `removeListener`, so a listener per wait would pile up there. */
  private onDrain: (() => void) | undefined;

  constructor(
    private readonly res: Response,
    /** The request's abort signal: a wait for 'drain' ends with it. */
    private readonly signal: AbortSignal,
    private readonly head: string,
    kind: RowKind,
  ) {
    this.lines = new RowBinaryToJson(kind);
  }

  /** Rows sent so far. */
  get rows(): number {
    return this.lines.rows;
  }

  /** Rows received from ClickHouse so far (sent, held or dropped). */
  get received(): number {
    return this.lines.received;
  }

  /** Holds back received rows from this index on (see RowBinaryToJson.holdFrom). */
  holdFrom(index: number): void {
    this.lines.holdFrom(index);
  }

  /** Sends the held rows of the boundary book; false when the book may go on beyond what was received. */
  async releaseBook(mayHaveMore: boolean): Promise<boolean> {
    const { complete, out } = this.lines.releaseBook(mayHaveMore);
    if (out) await this.write(out);
    return complete;
  }

  /** Renders one chunk of ClickHouse output and sends it; resolves once the socket can take more. */
  async chunk(buffer: Buffer): Promise<void> {
    const text = this.lines.push(buffer);
    // One write per chunk. No cork(): a corked ServerResponse reports no back-pressure below its 64 KiB high-water
    // mark whatever the socket holds, and a paused client would make us buffer the whole answer.
    if (text) await this.write(text);
  }

  /** One window's query finished: its output must have ended on a row boundary. */
  endOfQuery(): void {
    this.lines.endOfQuery();
  }

  finish(): void {
    this.commit();
    this.res.end(`],"count":${this.lines.rows}}`);
  }

  private commit(): void {
    if (this.started) return;
    this.started = true;
    this.res.status(200);
    this.res.setHeader('Content-Type', 'application/json; charset=utf-8');
    this.res.write(this.head);
    this.res.on('drain', () => {
      const waiter = this.onDrain;
      this.onDrain = undefined;
      waiter?.();
    });
  }

  private async write(buffer: Buffer): Promise<void> {
    this.commit();
    if (!this.res.write(buffer)) await this.drained();
  }

  private drained(): Promise<void> {
    const signal = this.signal;
    if (signal.aborted) return Promise.reject(new AbortedError());
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.onDrain = undefined;
        reject(new AbortedError());
      };
      this.onDrain = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
