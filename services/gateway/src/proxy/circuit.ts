export type CircuitState = 'closed' | 'open' | 'half-open';

/**
 * A circuit per upstream target (per process). `threshold` consecutive failures (connection errors, timeouts, 5xx)
 * open it; while open, requests get 503 without reaching the upstream; after `openMs` one probe request is let
 * through (half-open): its success closes the circuit, its failure opens it again.
 */
export class Circuit {
  state: CircuitState = 'closed';
  private failures = 0;
  private openedAt = 0;
  private probing = false;

  constructor(
    private readonly threshold: number,
    private readonly openMs: number,
    private readonly onChange: (state: CircuitState) => void = () => undefined,
  ) {}

  /** Whether a request may go upstream now; a `true` in half-open state is the probe. */
  allow(now: number): boolean {
    if (this.state === 'closed') return true;
    if (this.state === 'open') {
      if (now - this.openedAt < this.openMs) return false;
      this.set('half-open');
    }
    if (this.probing) return false;
    this.probing = true;
    return true;
  }

  /** Milliseconds until the next probe may go (for Retry-After). */
  retryAfterMs(now: number): number {
    return this.state === 'open' ? Math.max(0, this.openMs - (now - this.openedAt)) : 0;
  }

  success(): void {
    this.failures = 0;
    this.probing = false;
    if (this.state !== 'closed') this.set('closed');
  }

  failure(now: number): void {
    this.probing = false;
    this.failures++;
    if (this.state === 'half-open' || (this.state === 'closed' && this.failures >= this.threshold)) {
      this.openedAt = now;
      this.set('open');
    }
  }

  /** A request that ended without a verdict (the caller left) releases the probe slot. */
  release(): void {
    this.probing = false;
  }

  private set(state: CircuitState): void {
    this.state = state;
    this.onChange(state);
  }
}
