/**
 * The recorder's REST calls to a platform (discovery listings, trade backfill, checksum confirmations,
 * reconciliation books): JSON GETs with a timeout, paced by one token bucket per exchange (RECORDER_REST_RATES) so the
 * recorder stays inside the platform's documented public limit (upstreams.md), signed where the platform signs REST
 * calls and credentials are configured.
 *
 * Two lanes share the bucket. Foreground requests (discovery, backfill, confirmations) take the next slot in arrival
 * order. Background requests (the reconciliation schedule) take a slot only when it is free at once and no
 * foreground request is waiting: they never put a foreground request behind more than the one slot they hold, so a
 * schedule that could fill the whole rate (Coinbase: reconciliation's tenth of the budget equals the REST rate)
 * slows itself down instead of starving the backfill.
 */
export class RestError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'RestError';
  }
}

export interface RestClientOptions {
  baseUrl: string;
  /** Requests per second (0: unlimited). */
  ratePerSecond: number;
  timeoutMs: number;
  /** Authentication headers for a GET of `path` (the URL's full path, no query). */
  sign?: (method: string, path: string, nowMs: number) => Record<string, string>;
  userAgent?: string;
}

const DEFAULT_AGENT = 'depthgate-recorder';
/** How the User-Agent of the reconciliation schedule's reads ends. */
export const RECONCILE_AGENT_SUFFIX = ' (reconciliation)';

/** The token bucket of one exchange's REST calls, shared by both lanes. */
class RestPacer {
  private nextSlot = 0;
  /** Foreground requests waiting for their slot. */
  private waiting = 0;

  constructor(private readonly ratePerSecond: number) {}

  /** Waits for a request slot: the next one (foreground), or one free now while no foreground request waits. */
  async slot(background: boolean): Promise<void> {
    if (this.ratePerSecond <= 0) return;
    if (background) {
      for (;;) {
        const now = Date.now();
        if (this.waiting === 0 && this.nextSlot <= now) break;
        await sleep(Math.max(1, this.nextSlot - now));
      }
    }
    const now = Date.now();
    const at = Math.max(now, this.nextSlot);
    this.nextSlot = at + 1000 / this.ratePerSecond;
    if (at <= now) return;
    this.waiting++;
    try {
      await sleep(at - now);
    } finally {
      this.waiting--;
    }
  }
}

export class RestClient {
  private readonly base: string;

  constructor(
    private readonly o: RestClientOptions,
    private readonly pacer = new RestPacer(o.ratePerSecond),
    /** This client's requests take the background lane. */
    readonly isBackground = false,
  ) {
    this.base = o.baseUrl.replace(/\/$/, '');
  }

  /**
   * The same exchange's REST API on the background lane (the reconciliation schedule), sharing this rate; its
   * User-Agent ends with RECONCILE_AGENT_SUFFIX, so the venue's (and the simulator's) request logs tell its reads apart.
   */
  background(): RestClient {
    const userAgent = `${this.o.userAgent ?? DEFAULT_AGENT}${RECONCILE_AGENT_SUFFIX}`;
    return new RestClient({ ...this.o, userAgent }, this.pacer, true);
  }

  /** GET `path` (relative to the base URL, with its query) and parse JSON; non-2xx is a RestError. */
  async json(pathAndQuery: string, signal?: AbortSignal): Promise<unknown> {
    await this.pacer.slot(this.isBackground);
    const url = new URL(this.base + pathAndQuery);
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'User-Agent': this.o.userAgent ?? DEFAULT_AGENT,
      ...this.o.sign?.('GET', url.pathname, Date.now()),
    };
    const timeout = AbortSignal.timeout(this.o.timeoutMs);
    const res = await fetch(url, { headers, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    const text = await res.text();
    if (!res.ok) throw new RestError(`GET ${url.pathname} answered ${res.status}: ${text.slice(0, 200)}`, res.status);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new RestError(`GET ${url.pathname} did not answer JSON`, res.status);
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
