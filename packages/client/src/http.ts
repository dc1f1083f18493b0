/**
 * The one HTTP path of both clients: `fetch` only (Node ≥ 18 and every current browser; no Node built-in), with the
 * key, a request id per attempt, a deadline until the answer's headers, an idle deadline while a body streams,
 * bounded retries that honour `Retry-After`, and error answers turned into `HttpError`s.
 *
 * Retried: 429 and 503 answers (after `Retry-After` when the answer gives it, else an exponential backoff with
 * jitter), and requests that got no answer at all (connection refused or reset). Not retried: a `Retry-After` longer
 * than `retry.maxDelayMs` (the error says how long to wait), any other status, a timeout, the caller's abort.
 * Every method this package sends is a read (GETs, and the gateway's read-only POSTs), so a retry never repeats an
 * effect.
 *
 * Redirects are followed here, not by `fetch` (which sends every header but `Authorization` on to wherever a redirect
 * points, `X-API-Key` included): within the service's origin (scheme, host and port) with the key, at most
 * `MAX_REDIRECTS` hops; to another origin not at all — a `TransportError` `redirect`, the key never sent there.
 * Followed without the key instead, the history service would answer an anonymous caller's window (its last day): a
 * different result, and no error to say so.
 */
import { DataError, HttpError, TransportError } from './errors.js';

export interface RetryOptions {
  /** Further attempts after the first (default 3; 0 disables retries). */
  retries?: number;
  /** The longest wait before a retry, `Retry-After` included; a longer `Retry-After` is not waited for (60,000). */
  maxDelayMs?: number;
  /** First backoff when the answer gives no `Retry-After` (500 ms), doubling per attempt, with full jitter. */
  baseDelayMs?: number;
}

export interface ClientOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:7081` (a path prefix is kept). */
  baseUrl: string | URL;
  /** A depthgate API key (`dg_…`). Without one the history service treats the caller as anonymous. */
  apiKey?: string;
  /**
   * How the key is sent: `header` (`X-API-Key`, the default) or `basic` (HTTP Basic with the key as the user name
   * and an empty password, for environments that can only set `Authorization`). Both services take either.
   */
  keyIn?: 'header' | 'basic';
  /** Deadline until an answer's headers, per attempt (default 30,000 ms). */
  timeoutMs?: number;
  /** Longest silence while a body streams before it is given up as `timeout` (default 60,000 ms). */
  idleTimeoutMs?: number;
  retry?: RetryOptions;
  /** Headers added to every request (e.g. a `User-Agent` where the platform allows one). */
  headers?: Record<string, string>;
  /** Send an `X-Request-Id` with every attempt (default true), so errors name it even without an answer. */
  requestIds?: boolean;
  /** The fetch to use (default `globalThis.fetch`): a test double, or one bound to a custom dispatcher. */
  fetch?: typeof globalThis.fetch;
}

export interface RequestOptions {
  method?: 'GET' | 'HEAD' | 'POST';
  headers?: Record<string, string>;
  /** A request body (POST); sent as given. */
  body?: string | Uint8Array;
  signal?: AbortSignal;
}

/** An answer with status 2xx–3xx and what is needed to read its body safely. */
export interface Answer {
  response: Response;
  url: string;
  /** The answer's `X-Request-Id` (ours when it echoes it). */
  requestId: string | undefined;
  /** Reads the body as text (idle deadline, abort and transport errors mapped to typed errors). */
  text(): Promise<string>;
  /** Reads the body as chunks of bytes, with the idle deadline. */
  chunks(): AsyncGenerator<Uint8Array>;
  /** Gives the body up (closes the connection's stream). */
  cancel(): void;
}

const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

let counter = 0;
/** A request id: a UUID where the platform has one (secure contexts), else a random token of the same alphabet. */
function newRequestId(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (c?.randomUUID) return c.randomUUID();
  counter = (counter + 1) % 1e9;
  return `dgc-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}-${counter}`;
}

/**
 * `Retry-After` in ms: delta-seconds or an HTTP date (which names its day and month: `1.5` or `-1`, which `Date.parse`
 * would read as dates, are neither); undefined when absent or unreadable, and the usual backoff applies.
 */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[A-Za-z]{3}/.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const MAX_BODY_SHOWN = 500;
/** Redirects followed within the service's origin before giving up (`redirect`). */
const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export class Transport {
  private readonly base: string;
  private readonly fetchFn: typeof globalThis.fetch;
  private readonly retries: number;
  private readonly maxDelayMs: number;
  private readonly baseDelayMs: number;
  // The options and the headers hold the key: private to the language (`#`), so that neither `console.log` (Node's
  // util.inspect shows TypeScript's `private` fields) nor `JSON.stringify` of a client shows it.
  readonly #options: ClientOptions;
  readonly #headers: Record<string, string>;

  constructor(options: ClientOptions) {
    this.#options = options;
    const url = new URL(String(options.baseUrl));
    if (url.username || url.password) {
      throw new TypeError('baseUrl must not carry credentials: give the key as apiKey');
    }
    this.base = url.href.replace(/\/+$/, '');
    const f = options.fetch ?? (globalThis as { fetch?: typeof globalThis.fetch }).fetch;
    if (!f) throw new TypeError('no fetch in this environment: pass options.fetch');
    // Called as a plain function, never as a method of this object: a browser's fetch called with another `this`
    // than the window (or undefined) throws "Illegal invocation" before sending anything.
    this.fetchFn = (input, init) => f(input, init);
    this.retries = options.retry?.retries ?? 3;
    this.maxDelayMs = options.retry?.maxDelayMs ?? 60_000;
    this.baseDelayMs = options.retry?.baseDelayMs ?? 500;
    this.#headers = { ...options.headers };
    if (options.apiKey !== undefined) {
      if (!/^[\x21-\x7e]+$/.test(options.apiKey)) throw new TypeError('apiKey must be printable ASCII');
      if ((options.keyIn ?? 'header') === 'basic') {
        this.#headers.Authorization = `Basic ${btoa(`${options.apiKey}:`)}`;
      } else this.#headers['X-API-Key'] = options.apiKey;
    }
  }

  /** The absolute URL of a path (with its query) under the base URL. */
  url(path: string, query?: Record<string, string | number | undefined>): string {
    let url = this.base + path;
    if (query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (v !== undefined) q.append(k, String(v));
      const s = q.toString();
      if (s) url += `?${s}`;
    }
    return url;
  }

  /** Sends a request (with retries); resolves with a 2xx/3xx answer, else throws a typed error. */
  async request(url: string, opts: RequestOptions = {}): Promise<Answer> {
    const method = opts.method ?? 'GET';
    const label = `${method} ${url}`;
    for (let attempt = 0; ; attempt++) {
      const requestId = this.#options.requestIds === false ? undefined : newRequestId();
      const controller = new AbortController();
      const onAbort = () => controller.abort(opts.signal?.reason);
      if (opts.signal?.aborted) throw new TransportError('aborted', `${label}: aborted`, url, requestId);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, this.#options.timeoutMs ?? 30_000);
      const headers: Record<string, string> = { ...this.#headers, ...opts.headers };
      if (requestId !== undefined) headers['X-Request-Id'] = requestId;
      let response: Response;
      try {
        response = await this.send(
          url,
          { method, headers, body: opts.body, signal: controller.signal },
          label,
          requestId,
        );
      } catch (err) {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        if (err instanceof TransportError) throw err; // a redirect not followed
        if (opts.signal?.aborted)
          throw new TransportError('aborted', `${label}: aborted`, url, requestId, { cause: err });
        if (timedOut) {
          throw new TransportError(
            'timeout',
            `${label}: no answer within ${this.#options.timeoutMs ?? 30_000} ms${requestId ? ` (request id ${requestId})` : ''}`,
            url,
            requestId,
            { cause: err },
          );
        }
        if (attempt < this.retries) {
          await this.wait(this.backoff(attempt), opts.signal, label, url, requestId);
          continue;
        }
        throw new TransportError(
          'network_error',
          `${label}: ${describeCause(err)}${requestId ? ` (request id ${requestId})` : ''}`,
          url,
          requestId,
          { cause: err },
        );
      }
      clearTimeout(timer);
      const answerId = response.headers.get('x-request-id') ?? requestId;
      const body = new BodyReader(
        response,
        controller,
        opts.signal,
        onAbort,
        this.#options.idleTimeoutMs ?? 60_000,
        label,
        url,
        answerId,
      );
      if (response.status < 400) return body;
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
      const retriable = response.status === 429 || response.status === 503;
      const delay = retryAfterMs ?? this.backoff(attempt);
      if (retriable && attempt < this.retries && delay <= this.maxDelayMs) {
        body.cancel();
        await this.wait(delay, opts.signal, label, url, answerId);
        continue;
      }
      throw await errorOf(body, label, retryAfterMs);
    }
  }

  /**
   * One attempt's fetch, its redirects followed within the service's origin (see the top of this file): a 303 — and a
   * 301 or 302 after a POST — goes on as a GET without its body, as `fetch` would.
   */
  private async send(
    url: string,
    init: { method: string; headers: Record<string, string>; body?: string | Uint8Array; signal: AbortSignal },
    label: string,
    requestId: string | undefined,
  ): Promise<Response> {
    let { method, headers, body } = init;
    for (let at = url, hops = 0; ; hops++) {
      const response = await this.fetchFn(at, {
        method,
        headers,
        body: body as RequestInit['body'],
        signal: init.signal,
        redirect: 'manual',
      });
      const refuse = (why: string) => {
        response.body?.cancel().catch(() => undefined);
        return new TransportError(
          'redirect',
          `${label}: ${why}${requestId ? ` (request id ${requestId})` : ''}`,
          url,
          requestId,
        );
      };
      // A browser's fetch shows a redirect it was told not to follow as an opaque answer: where it leads is hidden.
      if (response.type === 'opaqueredirect') {
        throw refuse('redirected, and this platform’s fetch hides where to: not followed (give that URL as baseUrl)');
      }
      const location = REDIRECT_STATUSES.has(response.status) ? response.headers.get('location') : null;
      if (location === null) return response;
      const next = new URL(location, at);
      if (next.origin !== new URL(at).origin) {
        throw refuse(`redirected to another origin (${next.origin}), not followed: the key is not sent there`);
      }
      if (hops === MAX_REDIRECTS) throw refuse(`more than ${MAX_REDIRECTS} redirects`);
      response.body?.cancel().catch(() => undefined);
      if ((response.status === 303 && method !== 'HEAD') || (response.status < 303 && method === 'POST')) {
        method = 'GET';
        body = undefined;
        headers = Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'content-type'));
      }
      at = next.href;
    }
  }

  private backoff(attempt: number): number {
    return Math.min(this.maxDelayMs, Math.random() * this.baseDelayMs * 2 ** attempt);
  }

  private async wait(ms: number, signal: AbortSignal | undefined, label: string, url: string, id: string | undefined) {
    try {
      await sleep(ms, signal);
    } catch (err) {
      throw new TransportError('aborted', `${label}: aborted`, url, id, { cause: err });
    }
  }
}

function describeCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code) return `${cause.code}${cause.message ? ` ${cause.message}` : ''}`;
  return err instanceof Error ? err.message : String(err);
}

/** An error answer as an HttpError: `{"error","message"}` when the body is that, else a non-JSON-body error. */
async function errorOf(body: BodyReader, label: string, retryAfterMs: number | undefined): Promise<HttpError> {
  let text = '';
  try {
    text = await body.text();
  } catch {
    // The status is what matters; a body that cannot be read is shown empty.
  }
  let error: string | undefined;
  let json: unknown;
  let message: string;
  try {
    json = JSON.parse(text) as unknown;
    const o = json as { error?: unknown; message?: unknown };
    if (typeof o === 'object' && o !== null && typeof o.error === 'string') {
      error = o.error;
      message = typeof o.message === 'string' ? o.message : '';
    } else message = text.slice(0, 200);
  } catch {
    json = undefined;
    const type = body.response.headers.get('content-type') ?? 'no content type';
    message = `error body is not JSON (${type}): ${text.slice(0, 200)}`;
  }
  return new HttpError({
    status: body.response.status,
    error,
    json,
    message,
    requestId: body.requestId,
    url: label,
    retryAfterMs,
    body: text.slice(0, MAX_BODY_SHOWN),
  });
}

class BodyReader implements Answer {
  constructor(
    readonly response: Response,
    private readonly controller: AbortController,
    private readonly signal: AbortSignal | undefined,
    private readonly onAbort: () => void,
    private readonly idleMs: number,
    private readonly label: string,
    readonly url: string,
    readonly requestId: string | undefined,
  ) {}

  async text(): Promise<string> {
    const decoder = new TextDecoder('utf-8', { fatal: true });
    let out = '';
    try {
      for await (const chunk of this.chunks()) out += decoder.decode(chunk, { stream: true });
      out += decoder.decode();
    } catch (err) {
      if (err instanceof TypeError && !(err instanceof DataError)) {
        throw new DataError('malformed_body', 'the body is not UTF-8 text', {
          url: this.label,
          requestId: this.requestId,
        });
      }
      throw err;
    }
    return out;
  }

  async *chunks(): AsyncGenerator<Uint8Array> {
    const stream = this.response.body;
    if (!stream) return this.done();
    const reader = stream.getReader();
    let idle = false;
    let finished = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        idle = true;
        this.controller.abort();
      }, this.idleMs);
    };
    try {
      for (;;) {
        arm();
        let r: Awaited<ReturnType<typeof reader.read>>;
        try {
          r = await reader.read();
        } catch (err) {
          if (this.signal?.aborted) {
            throw new TransportError('aborted', `${this.label}: aborted`, this.url, this.requestId, { cause: err });
          }
          if (idle) {
            throw new TransportError(
              'timeout',
              `${this.label}: the body stalled for ${this.idleMs} ms (request id ${this.requestId})`,
              this.url,
              this.requestId,
              { cause: err },
            );
          }
          throw new DataError(
            'stream_cut',
            `the body was cut: ${describeCause(err)}`,
            { url: this.label, requestId: this.requestId },
            { cause: err },
          );
        }
        if (r.done) break;
        yield r.value;
      }
      finished = true;
    } finally {
      clearTimeout(timer);
      // A consumer that stops early (or an error) gives the rest of the body up, which frees the connection.
      if (!finished) reader.cancel().catch(() => undefined);
      reader.releaseLock();
      this.done();
    }
  }

  cancel(): void {
    this.response.body?.cancel().catch(() => undefined);
    this.done();
  }

  private done(): void {
    this.signal?.removeEventListener('abort', this.onAbort);
  }
}
