/**
 * The times this process did not run its event loop (a long synchronous task, a collection, the machine's other
 * processes keeping it off the CPU), as seen by a 10 ms timer firing late. A test whose parties share the process
 * (a simulator and the service reading its feed) can bound a message's delivery lag by them: beyond the loopback's
 * own latency, a message only trails its send while the loop is not running.
 */
export class LoopStalls {
  private readonly stalls: { at: number; ms: number }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private last = 0;

  /** Lateness below `minMs` is not kept (a timer is always a little late). */
  constructor(
    private readonly periodMs = 10,
    private readonly minMs = 20,
  ) {}

  start(): this {
    this.last = Date.now();
    this.timer = setInterval(() => {
      const now = Date.now();
      const late = now - this.last - this.periodMs;
      if (late >= this.minMs) this.stalls.push({ at: now, ms: late });
      this.last = now;
    }, this.periodMs);
    this.timer.unref();
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The loop's total lateness over the stalls that overlap [from, to] (wall clock, ms), each counted whole. */
  within(from: number, to: number): number {
    let ms = 0;
    for (const s of this.stalls) if (s.at >= from && s.at - s.ms <= to) ms += s.ms;
    return ms;
  }
}
