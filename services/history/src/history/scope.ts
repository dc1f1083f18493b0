/**
 * The ClickHouse side of one HTTP request: its time budget, its cancellation, the queries it has running.
 *
 * - Until the response has started (`committed`), the budget is enforced here to the millisecond: when it runs
 *   out, every running query is aborted and killed, and the caller gets 503 `query_timeout`.
 * - Every query also carries `max_execution_time` (whole seconds: the rest of the budget rounded up, or the whole
 *   budget once streaming), so the server stops it by itself even if this process could not.
 * - When the caller goes away before the response is complete, the HTTP request to ClickHouse is aborted and
 *   `KILL QUERY … ASYNC` is sent for each running query id (a query still sorting would otherwise run on: an
 *   aborted HTTP request only stops a query when it next writes).
 */
import type { Response } from 'express';
import type { ClickHouse } from '../clickhouse/client';

export type AbortReason = 'timeout' | 'disconnect';

export class QueryScope {
  private readonly controller = new AbortController();
  private readonly running = new Set<string>();
  private readonly startedAt = Date.now();
  private readonly timer: NodeJS.Timeout;
  private readonly onClose: () => void;
  reason: AbortReason | undefined;
  /** True once the response status and first bytes have gone out. */
  committed = false;
  /** Queries this request has sent to ClickHouse so far (the next one is a continuation, see QueryGate). */
  queriesSent = 0;

  constructor(
    private readonly ch: ClickHouse,
    private readonly budgetMs: number,
    private readonly res: Response,
  ) {
    this.timer = setTimeout(() => {
      if (!this.committed) this.abort('timeout');
    }, budgetMs);
    this.timer.unref();
    this.onClose = () => {
      if (!res.writableFinished) this.abort('disconnect');
    };
    res.once('close', this.onClose);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.reason !== undefined;
  }

  /** `max_execution_time` for the next query, in whole seconds (ClickHouse 18.16 accepts no fractions). */
  maxExecutionTimeSeconds(): number {
    if (this.committed) return Math.max(1, Math.ceil(this.budgetMs / 1000));
    const left = this.budgetMs - (Date.now() - this.startedAt);
    return Math.max(1, Math.ceil(left / 1000));
  }

  track(queryId: string): void {
    this.running.add(queryId);
  }

  untrack(queryId: string): void {
    this.running.delete(queryId);
  }

  abort(reason: AbortReason): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.controller.abort();
    for (const id of this.running) void this.ch.kill(id);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.res.off('close', this.onClose);
  }
}
