// https://www.interactivebrokers.com/campus/ibkr-api-page/cpapi-v1/#session (tickle keeps the brokerage session alive)
/**
 * The Client Portal gateway session: authenticated until it stays idle (no `/tickle`) longer than the idle timeout,
 * then every API call answers 401 until someone logs in again (the real gateway needs its browser login; here
 * `sim.ibkr.login()` or `POST /control/ibkr/login`).
 */
export class IbkrSession {
  private authenticated = true;
  private lastActivity: number;
  readonly sessionId: string;

  constructor(
    private readonly idleTimeoutMs: number,
    private readonly clock: () => number,
    sessionId: string,
  ) {
    this.lastActivity = clock();
    this.sessionId = sessionId;
  }

  isAuthenticated(): boolean {
    if (this.authenticated && this.clock() - this.lastActivity > this.idleTimeoutMs) this.authenticated = false;
    return this.authenticated;
  }

  /** Keeps an authenticated session alive; no effect on an expired one. */
  touch(): void {
    if (this.isAuthenticated()) this.lastActivity = this.clock();
  }

  expire(): void {
    this.authenticated = false;
  }

  login(): void {
    this.authenticated = true;
    this.lastActivity = this.clock();
  }

  /** ms until the session expires without activity (0 when expired). */
  remainingMs(): number {
    return this.isAuthenticated() ? Math.max(0, this.idleTimeoutMs - (this.clock() - this.lastActivity)) : 0;
  }
}
