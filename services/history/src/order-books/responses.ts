/**
 * The body of a snapshots/deltas response, written as the reader hands over rows:
 *
 *   {"exchange":"venue_b","ticker":"KX…","rows":[ …row, row… ],"count":N}
 *
 * `count` follows `rows` so nothing has to be held back: the number is known only once the last row went out
 * (JSON objects are unordered; docs/history.md says so). Headers and the opening bytes go out with the first row —
 * or at the end when there is none — so any failure before that can still be answered with a proper error status.
 * Whether that moment has come is the response's own state (`res.headersSent`); nothing else records it.
 */
import type { ExchangeKey } from '@depthgate/auth';
import type { Response } from 'express';
import type { RowsSink } from './reader';

export class AbortedError extends Error {
  constructor() {
    super('the request was aborted');
    this.name = 'AbortError';
  }
}

/** The opening of a rows body, up to the first row. */
export function rowsHead(exchange: ExchangeKey, ticker: string): string {
  return `{"exchange":${JSON.stringify(exchange)},"ticker":${JSON.stringify(ticker)},"rows":[`;
}

export class RowsResponse implements RowsSink {
  private started = false;
  /** Called on the next 'drain'. One listener per response, never removed: the `compression` middleware forwards
   * `res.on('drain')` to its gzip stream but not `removeListener`, so a listener per wait would pile up there. */
  private onDrain: (() => void) | undefined;

  constructor(
    private readonly res: Response,
    /** The request's abort signal: a wait for 'drain' ends with it. */
    private readonly signal: AbortSignal,
    private readonly head: string,
  ) {}

  /**
   * Sends rendered rows (one write: no cork(), since a corked ServerResponse reports no back-pressure below its
   * 64 KiB high-water mark whatever the socket holds, and a paused client would make us buffer the whole answer);
   * resolves once the socket can take more.
   */
  async write(text: Buffer): Promise<void> {
    this.commit();
    if (!this.res.write(text)) await this.drained();
  }

  /** Closes the array and the object with the number of rows sent. */
  finish(count: number): void {
    this.commit();
    this.res.end(`],"count":${count}}`);
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
