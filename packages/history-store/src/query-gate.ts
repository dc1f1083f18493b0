/**
 * Bounds how many queries this process has ClickHouse working on at once; the rest wait in arrival order.
 *
 * A query holds its place only until ClickHouse starts answering (the response headers, which ClickHouse sends with
 * its first rows: by then it has read and sorted the window). Streaming the rows out afterwards costs ClickHouse
 * little and may be slowed by the caller's reading speed, so it holds nothing here: a slow reader cannot starve
 * others.
 *
 * Why: with every request's query running at once, ClickHouse shares its cores among all of them, so each takes as
 * long as the whole batch, and any request that needs a second window pays that twice. Queued in order, a request
 * waits for those ahead of it and then runs at full speed, which keeps the slowest answers close to the typical
 * ones (docs/benchmarks.md has the figures).
 */
export class GateClosedError extends Error {
  constructor() {
    super('the request was aborted while waiting for ClickHouse');
    this.name = 'AbortError';
  }
}

interface Waiter {
  grant: () => void;
  cancel: () => void;
  continuation: boolean;
}

export class QueryGate {
  private running = 0;
  private readonly queue: Waiter[] = [];
  private head = 0;

  constructor(readonly limit: number) {}

  /** Queries waiting for a place. */
  get waiting(): number {
    return this.queue.length - this.head;
  }

  /**
   * Resolves with a release function (safe to call more than once) once a place is free. Rejects with
   * GateClosedError when `signal` aborts first; the place is then never taken. A `continuation` (the next query of a
   * request that already had one: its next window, the rest of a book) waits ahead of the requests that have not
   * started: it finishes work already begun, and without it a request needing two windows would queue twice.
   */
  acquire(signal: AbortSignal, continuation = false): Promise<() => void> {
    if (signal.aborted) return Promise.reject(new GateClosedError());
    if (this.running < this.limit && this.waiting === 0) {
      this.running++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => waiter.cancel();
      const waiter: Waiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          this.running++;
          resolve(this.releaser());
        },
        cancel: () => {
          const at = this.queue.indexOf(waiter, this.head);
          if (at !== -1) this.queue.splice(at, 1);
          reject(new GateClosedError());
        },
        continuation,
      };
      signal.addEventListener('abort', onAbort, { once: true });
      if (!continuation) this.queue.push(waiter);
      else {
        // Behind the continuations already waiting, ahead of every first query.
        let at = this.head;
        while (at < this.queue.length && (this.queue[at] as Waiter).continuation) at++;
        this.queue.splice(at, 0, waiter);
      }
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.next();
    };
  }

  private next(): void {
    while (this.running < this.limit && this.head < this.queue.length) {
      const waiter = this.queue[this.head++] as Waiter;
      waiter.grant();
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }
}
