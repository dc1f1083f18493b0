/**
 * A signer turns one upstream request into the headers that authenticate it. It is a function of its inputs and
 * the clock only; it neither sends nor reads anything. Signers that need asynchronous work (JWT signing through
 * WebCrypto) return a promise; whoever sends the request awaits it first. The gateway signs every forwarded call with
 * them, the recorder its feed handshakes and REST listings. A signer makes its key once, as a KeyObject: Node 24's
 * `createHmac` given a key's bytes first tells them from a KeyObject by catching a thrown error, which made an HMAC
 * signature about 8× slower (docs/benchmarks.md, gateway).
 */
export interface SignInput {
  method: string;
  /** Full upstream path including the platform's base path (e.g. `/trade-api/v2/portfolio/balance`), no query. */
  path: string;
  /** Raw query string without `?` ('' when none). */
  query: string;
  /** Request body ('' for GET and HEAD). */
  body: string;
  /** Upstream host (`api.coinbase.com`), for schemes that sign it. */
  host: string;
}

export type SignedHeaders = Record<string, string>;

export interface Signer {
  readonly name: string;
  /** Names of the headers this signer sets (lower-case). */
  readonly headerNames: readonly string[];
  sign(input: SignInput, nowMs: number): SignedHeaders | Promise<SignedHeaders>;
}

/** A signer that needs no asynchronous work (every scheme but JWT). */
export interface SyncSigner extends Signer {
  sign(input: SignInput, nowMs: number): SignedHeaders;
}

export function withQuery(path: string, query: string): string {
  return query === '' ? path : `${path}?${query}`;
}

/** URL-safe base64 as Polymarket's clients produce it (padding kept). */
export function base64UrlKeepPadding(buf: Buffer): string {
  return buf.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

/**
 * Signs with a signer that must answer at once (a WebSocket handshake built synchronously, as the recorder's
 * are); throws if the scheme needs asynchronous work.
 */
export function signNow(signer: Signer, input: SignInput, nowMs: number): SignedHeaders {
  const headers = signer.sign(input, nowMs);
  if (headers instanceof Promise)
    throw new Error(`signer ${signer.name} is asynchronous; this caller needs headers at once`);
  return headers;
}

/**
 * The headers of a feed handshake that authenticates like the platform's REST API (Kalshi's RSA-PSS, Polymarket US's
 * Ed25519) [V]: the signer's headers over `GET` and the WebSocket path, no query, no body; undefined without a signer.
 */
export function feedHandshakeHeaders(
  signer: Signer | undefined,
  feedUrl: string,
  nowMs: number,
): SignedHeaders | undefined {
  if (!signer) return undefined;
  const url = new URL(feedUrl);
  return signNow(signer, { method: 'GET', path: url.pathname, query: '', body: '', host: url.host }, nowMs);
}
