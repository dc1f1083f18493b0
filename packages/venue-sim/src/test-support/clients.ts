import https from 'node:https';
import { WebSocket } from 'ws';

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

export async function get(
  url: string,
  headers: Record<string, string> = {},
  init: RequestInit = {},
): Promise<HttpResult> {
  const res = await fetch(url, { headers, ...init });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, json: body };
}

/** GET over HTTPS trusting `ca` (the IBKR portal's self-signed certificate). */
export function httpsGet(
  url: string,
  ca: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ca, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
  });
}

/**
 * A WebSocket client that keeps every message and can wait for the next ones: `texts` as received, `messages` the
 * JSON ones (the elements of a JSON array each count as one, as the CLOB sends its initial books in one array).
 */
export class FeedClient {
  readonly messages: Array<Record<string, unknown>> = [];
  readonly texts: string[] = [];
  closed = false;
  closeCode = 0;
  private waiters: Array<() => void> = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const text = String(data);
      this.texts.push(text);
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        value = undefined;
      }
      if (Array.isArray(value)) this.messages.push(...(value as Array<Record<string, unknown>>));
      else if (value !== undefined) this.messages.push(value as Record<string, unknown>);
      this.wake();
    });
    ws.on('close', (code) => {
      this.closed = true;
      this.closeCode = code;
      this.wake();
    });
  }

  static open(url: string, headers: Record<string, string> = {}): Promise<FeedClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers, perMessageDeflate: false });
      const client = new FeedClient(ws);
      ws.once('open', () => resolve(client));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`handshake refused: ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }

  /** Resolves with the HTTP status of a refused handshake. */
  static refused(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers });
      ws.once('open', () => {
        ws.terminate();
        reject(new Error('handshake unexpectedly accepted'));
      });
      ws.once('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      });
      ws.once('error', () => undefined);
    });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  send(value: unknown): void {
    this.ws.send(typeof value === 'string' ? value : JSON.stringify(value));
  }

  /** Waits until `predicate(messages)` holds. */
  async until(predicate: (messages: Array<Record<string, unknown>>) => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.messages)) {
      if (this.closed) throw new Error('connection closed while waiting');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms with ${this.messages.length} messages`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /**
   * Round trip through the server: ping frames are answered after everything the server wrote before, so once the
   * pong is back every message sent before `sync()` was called has arrived.
   */
  sync(): Promise<void> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no pong')), 10_000);
      this.ws.once('pong', () => {
        clearTimeout(t);
        // 'message' events for frames read before the pong are already emitted.
        setImmediate(resolve);
      });
      this.ws.ping();
    });
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.terminate();
    });
  }
}
