/** What of a WebSocket an inbox needs (the `ws` library's WebSocket has it). */
export interface PausableSocket {
  pause(): void;
  resume(): void;
  readonly isPaused: boolean;
}

/**
 * A socket's client messages handled one at a time, in order: each task starts once the one before it has settled (a
 * subscribe that waits on Redis or ClickHouse holds the next message back). With `maxPending` tasks waiting, the
 * socket stops reading (TCP pushes back on the sender) until half of them are done, so a client that sends faster than
 * it is answered is slowed instead of held in memory. A task that throws or rejects goes to `onError`; the next runs
 * all the same. Used by the gateway's WebSocket proxy and the replay's sockets.
 */
export class SerialInbox {
  private tail: Promise<unknown> = Promise.resolve();
  private pending = 0;

  constructor(
    private readonly socket: PausableSocket,
    private readonly maxPending: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Runs `task` after every task pushed before it has settled. */
  push(task: () => unknown): void {
    if (++this.pending >= this.maxPending) this.socket.pause();
    this.tail = this.tail
      .then(task)
      .catch(this.onError)
      .finally(() => {
        if (--this.pending <= this.maxPending / 2 && this.socket.isPaused) this.socket.resume();
      });
  }

  /** Settles (never rejects) once every task pushed so far has settled. */
  get settled(): Promise<unknown> {
    return this.tail;
  }
}
