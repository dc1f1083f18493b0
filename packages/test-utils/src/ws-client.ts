import { WebSocket, type ClientOptions } from 'ws';

export interface WsOpenOptions {
  headers?: Record<string, string>;
  protocols?: string[];
  /** Further options of the `ws` client. */
  client?: ClientOptions;
}

/**
 * A WebSocket client for tests (the simulator's feeds, the gateway's proxy) that keeps every message and can wait
 * for the next ones: `texts` as received, `messages` the JSON ones (the elements of a JSON array each count as one,
 * as the Polymarket CLOB sends its initial books in one array).
 */
export class WsTestClient {
  readonly messages: Record<string, unknown>[] = [];
  readonly texts: string[] = [];
  closed = false;
  closeCode = 0;
  closeReason = '';
  private waiters: (() => void)[] = [];

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
      if (Array.isArray(value)) this.messages.push(...(value as Record<string, unknown>[]));
      else if (value !== null && typeof value === 'object') this.messages.push(value as Record<string, unknown>);
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = true;
      this.closeCode = code;
      this.closeReason = reason.toString();
      this.wake();
    });
    ws.on('error', () => undefined);
  }

  static open(url: string, o: WsOpenOptions = {}): Promise<WsTestClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, o.protocols ?? [], { headers: o.headers, perMessageDeflate: false, ...o.client });
      const client = new WsTestClient(ws);
      ws.once('open', () => resolve(client));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`handshake refused: ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }

  /** The status and body of a refused handshake (`json`: the body parsed, when it is JSON). */
  static refused(url: string, o: WsOpenOptions = {}): Promise<{ status: number; body: string; json: unknown }> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, o.protocols ?? [], { headers: o.headers });
      ws.once('open', () => {
        ws.terminate();
        reject(new Error('handshake unexpectedly accepted'));
      });
      ws.once('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString();
          let json: unknown;
          try {
            json = JSON.parse(body);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body, json });
        });
      });
      ws.once('error', () => undefined);
    });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Sends a string as it is, anything else as JSON. */
  send(value: unknown): void {
    this.ws.send(typeof value === 'string' ? value : JSON.stringify(value));
  }

  /** Waits until `predicate(messages)` holds (a bound for failing, not a timing assertion). */
  async until(
    predicate: (messages: Record<string, unknown>[]) => boolean,
    what = 'condition',
    timeoutMs = 15_000,
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.messages)) {
      if (this.closed) throw new Error(`connection closed while waiting for ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what} (${this.messages.length} messages)`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 100));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Waits for the connection to close (a closing handshake or a cut). */
  untilClosed(timeoutMs = 15_000): Promise<void> {
    return this.until(() => this.closed, 'the connection to close', timeoutMs);
  }

  ofType(field: string, value: unknown): Record<string, unknown>[] {
    return this.messages.filter((m) => m[field] === value);
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
