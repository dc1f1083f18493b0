/**
 * The close of a WebSocket whose client sent more messages than its rate allows (MessageRate): the gateway's proxy
 * (WS_CLIENT_MESSAGES_PER_SECOND) and the replay's sockets (REPLAY_WS_MESSAGES_PER_SECOND). Numbered after HTTP's 429.
 */
export const TOO_MANY_MESSAGES_CLOSE = { code: 4429, reason: 'too many messages' } as const;

/**
 * A client's messages per second on one socket, with bursts of twice as many: a token bucket that starts full (two
 * seconds' worth) and refills continuously. Every message a client sends may cost the service a Redis or ClickHouse
 * round trip (a subscribe), so a socket that sends more than this is closed rather than answered.
 */
export class MessageRate {
  private tokens: number;
  private last: number;

  constructor(
    private readonly perSecond: number,
    now = Date.now(),
  ) {
    this.tokens = perSecond * 2;
    this.last = now;
  }

  /** Counts one message: false when it is over the rate (the socket should be closed). */
  take(now = Date.now()): boolean {
    const rate = this.perSecond;
    this.tokens = Math.min(rate * 2, this.tokens + ((now - this.last) * rate) / 1000);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
