/**
 * The ClickHouse side of one unit of work — an HTTP request of the history API, one recorder probe: its time
 * budget, its cancellation, the queries it has running. Made by HistoryStore.scope(); the querier runs queries under
 * it. The scope alone changes its own state: the querier announces each query (`enter`/`leave`), the owner of the
 * work may `abort` it, and whether the caller's answer has started is asked of the owner (`answerStarted`), never
 * set from outside.
 *
 * - Until the answer has started, the budget is enforced here to the millisecond: when it runs out, every running
 *   query is aborted and killed (reason `timeout`).
 * - Every query also carries `max_execution_time` (whole seconds: the rest of the budget rounded up, or the whole
 *   budget once the answer has started), so the server stops it by itself even if this process could not.
 * - `abort('cancelled')` (a caller that went away) aborts the HTTP requests to ClickHouse and sends
 *   `KILL QUERY … ASYNC` for each running query id (on a cluster `ON CLUSTER`, so it reaches the server running
 *   it): a query still sorting would otherwise run on, since an aborted HTTP request only stops a query when it next
 *   writes.
 */
export type AbortReason = 'timeout' | 'cancelled';

/** A query's result was cut short because its scope was aborted (whatever part of it had arrived). */
export class QueryAbortedError extends Error {
  constructor(readonly reason: AbortReason) {
    super(`the query was ${reason === 'timeout' ? 'over its time budget' : 'cancelled'}`);
    this.name = 'AbortError';
  }
}

export class QueryScope {
  private readonly controller = new AbortController();
  private readonly running = new Set<string>();
  private readonly startedAt = Date.now();
  private readonly timer: NodeJS.Timeout;
  private abortReason: AbortReason | undefined;
  private sent = 0;

  constructor(
    private readonly kill: (queryId: string) => Promise<void>,
    readonly budgetMs: number,
    private readonly answerStarted: () => boolean = () => false,
  ) {
    this.timer = setTimeout(() => {
      if (!this.answerStarted()) this.abort('timeout');
    }, budgetMs);
    this.timer.unref();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why the scope was aborted; undefined while it was not. */
  get reason(): AbortReason | undefined {
    return this.abortReason;
  }

  get aborted(): boolean {
    return this.abortReason !== undefined;
  }

  /** `max_execution_time` for the next query, in whole seconds (ClickHouse 18.16 accepts no fractions). */
  maxExecutionTimeSeconds(): number {
    if (this.answerStarted()) return Math.max(1, Math.ceil(this.budgetMs / 1000));
    const left = this.budgetMs - (Date.now() - this.startedAt);
    return Math.max(1, Math.ceil(left / 1000));
  }

  /**
   * A query is about to be sent. Returns whether this scope sent one before: a continuation of work already begun
   * (the next window, the rest of a book), which the query gate lets ahead of work not yet started.
   */
  enter(queryId: string): boolean {
    this.running.add(queryId);
    return this.sent++ > 0;
  }

  /** The query has ended (answered, failed or cancelled). */
  leave(queryId: string): void {
    this.running.delete(queryId);
  }

  abort(reason: AbortReason): void {
    if (this.abortReason !== undefined) return;
    this.abortReason = reason;
    this.controller.abort();
    for (const id of this.running) void this.kill(id);
  }

  /** Stops the budget's timer; the scope's queries have all left. */
  dispose(): void {
    clearTimeout(this.timer);
  }
}
