/**
 * The recorder's REST calls to a platform (discovery listings, reconciliation books): JSON GETs with a timeout,
 * paced by a token bucket so the recorder stays inside the platform's documented public limit (upstreams.md),
 * signed where the platform signs REST calls and credentials are configured.
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

export class RestClient {
  private nextSlot = 0;
  private readonly base: string;

  constructor(private readonly o: RestClientOptions) {
    this.base = o.baseUrl.replace(/\/$/, '');
  }

  /** Waits for the next request slot of the rate limit. */
  private async slot(): Promise<void> {
    if (this.o.ratePerSecond <= 0) return;
    const now = Date.now();
    const at = Math.max(now, this.nextSlot);
    this.nextSlot = at + 1000 / this.o.ratePerSecond;
    if (at > now) await new Promise((r) => setTimeout(r, at - now));
  }

  /** GET `path` (relative to the base URL, with its query) and parse JSON; non-2xx is a RestError. */
  async json(pathAndQuery: string, signal?: AbortSignal): Promise<unknown> {
    await this.slot();
    const url = new URL(this.base + pathAndQuery);
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'User-Agent': this.o.userAgent ?? 'depthgate-recorder',
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
