/**
 * WebSocket test helpers (not part of the build): a client that keeps what it receives, and each platform's book as
 * a client rebuilds it from the messages it got — written from the platforms' documented formats, independently of
 * the gateway's own book-keeping — to compare with the venue's book (the simulator's truth).
 */
import { WebSocket, type ClientOptions } from 'ws';
import type { DecimalBook, Simulator } from '@depthgate/venue-sim';

export interface WsOpenOptions {
  headers?: Record<string, string>;
  protocols?: string[];
  /** Options of the `ws` client (e.g. a tiny receive buffer for a slow client). */
  client?: ClientOptions;
}

/** A WebSocket client that keeps every message and can wait for the next ones. */
export class WsClient {
  /** JSON messages (the elements of a JSON array each count as one). */
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

  static open(url: string, o: WsOpenOptions = {}): Promise<WsClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, o.protocols ?? [], { headers: o.headers, perMessageDeflate: false, ...o.client });
      const client = new WsClient(ws);
      ws.once('open', () => resolve(client));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`handshake refused: ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }

  /** The status and JSON body of a refused handshake. */
  static refused(url: string, o: WsOpenOptions = {}): Promise<{ status: number; body: unknown }> {
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
          const text = Buffer.concat(chunks).toString();
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode ?? 0, body });
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

  send(value: unknown): void {
    this.ws.send(typeof value === 'string' ? value : JSON.stringify(value));
  }

  /** Waits until `predicate` holds (a bound for failing, not a timing assertion). */
  async until(predicate: () => boolean, what = 'condition', timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
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
  async untilClosed(timeoutMs = 15_000): Promise<void> {
    await this.until(() => this.closed, 'the connection to close', timeoutMs);
  }

  ofType(field: string, value: unknown): Record<string, unknown>[] {
    return this.messages.filter((m) => m[field] === value);
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.terminate();
    });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Books as a client rebuilds them

/** Decimal text compared by value: scaled to 18 places as a BigInt. */
function scaled(text: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) throw new Error(`not a decimal: ${text}`);
  const v = BigInt((m[2] as string) + (m[3] ?? '').padEnd(18, '0').slice(0, 18));
  return m[1] ? -v : v;
}

function canon(text: string): string {
  const v = scaled(text);
  const neg = v < 0n;
  const digits = (neg ? -v : v).toString().padStart(19, '0');
  const int = digits.slice(0, -18).replace(/^0+(?=\d)/, '');
  const frac = digits.slice(-18).replace(/0+$/, '');
  return `${neg ? '-' : ''}${int}${frac ? `.${frac}` : ''}`;
}

const ONE = scaled('1');

function complement(price: string): string {
  const r = ONE - scaled(price);
  return canon(`${r / 10n ** 18n}.${(r % 10n ** 18n).toString().padStart(18, '0')}`);
}

/** One market's book: price → size, both canonical. */
class Side extends Map<string, string> {
  override set(price: string, size: string): this {
    const p = canon(price);
    if (scaled(size) === 0n) super.delete(p);
    else super.set(p, canon(size));
    return this;
  }
  add(price: string, delta: string): void {
    const p = canon(price);
    const q = scaled(this.get(p) ?? '0') + scaled(delta);
    if (q < 0n) throw new Error(`negative quantity at ${price}`);
    const text = `${q / 10n ** 18n}.${(q % 10n ** 18n).toString().padStart(18, '0')}`;
    if (q === 0n) super.delete(p);
    else super.set(p, canon(text));
  }
  levels(desc: boolean): [string, string][] {
    return [...this.entries()].sort((a, b) => {
      const d = scaled(a[0]) - scaled(b[0]);
      return (d < 0n ? -1 : d > 0n ? 1 : 0) * (desc ? -1 : 1);
    });
  }
}

class Book {
  bids = new Side();
  asks = new Side();
  view(): DecimalBook {
    return { bids: this.bids.levels(true), asks: this.asks.levels(false) };
  }
}

/** The venue's book, canonical, best first. */
export function venueBook(sim: Simulator, platform: string, market: string): DecimalBook {
  const b = sim.books.book(platform, market);
  const c = (l: [string, string][]) => l.map(([p, q]) => [canon(p), canon(q)] as [string, string]);
  return { bids: c(b.bids), asks: c(b.asks) };
}

export type BookPlatform = 'kalshi' | 'clob' | 'polymarketUs' | 'gemini' | 'coinbase';

/**
 * A client's books on one platform, rebuilt from the messages in arrival order by the platform's documented rules:
 * Kalshi snapshots then signed deltas (NO bids are YES asks at 1 − p), the CLOB's `book` then new level sizes,
 * Polymarket US's whole book each message, Gemini's absolute level sizes (never reset: the gateway's resync message
 * must be right for a client that only applies changes), Coinbase's `snapshot` then `l2update` sizes.
 */
export class ClientBooks {
  private readonly books = new Map<string, Book>();
  /** Kalshi: per sid, seq numbers missing. */
  seqGaps = 0;
  private readonly seqs = new Map<number, number>();
  private applied = 0;

  constructor(private readonly platform: BookPlatform) {}

  private book(market: string, fresh = false): Book {
    let b = this.books.get(market);
    if (!b || fresh) this.books.set(market, (b = new Book()));
    return b;
  }

  /** Applies the messages received since the last call. */
  update(client: WsClient): this {
    for (; this.applied < client.messages.length; this.applied++) this.apply(client.messages[this.applied] ?? {});
    return this;
  }

  view(market: string): DecimalBook | undefined {
    return this.books.get(market)?.view();
  }

  apply(m: Record<string, unknown>): void {
    switch (this.platform) {
      case 'kalshi': {
        if (m.type !== 'orderbook_snapshot' && m.type !== 'orderbook_delta') return;
        const sid = m.sid as number;
        const seq = m.seq as number;
        const prev = this.seqs.get(sid);
        if (prev !== undefined && seq !== prev + 1) this.seqGaps += seq - prev - 1;
        this.seqs.set(sid, seq);
        const msg = m.msg as Record<string, unknown>;
        const market = msg.market_ticker as string;
        if (m.type === 'orderbook_snapshot') {
          const b = this.book(market, true);
          for (const [p, q] of (msg.yes_dollars_fp ?? msg.yes_dollars) as [string, string][]) b.bids.set(p, q);
          for (const [p, q] of (msg.no_dollars_fp ?? msg.no_dollars) as [string, string][])
            b.asks.set(complement(p), q);
          return;
        }
        const b = this.books.get(market);
        if (!b) throw new Error(`delta before snapshot for ${market}`);
        if (msg.side === 'yes') b.bids.add(msg.price_dollars as string, msg.delta_fp as string);
        else b.asks.add(complement(msg.price_dollars as string), msg.delta_fp as string);
        return;
      }
      case 'clob': {
        if (m.event_type === 'book') {
          const b = this.book(m.asset_id as string, true);
          for (const l of m.bids as { price: string; size: string }[]) b.bids.set(l.price, l.size);
          for (const l of m.asks as { price: string; size: string }[]) b.asks.set(l.price, l.size);
        } else if (m.event_type === 'price_change') {
          for (const i of m.price_changes as Record<string, string>[]) {
            const b = this.books.get(i.asset_id as string);
            if (!b) throw new Error(`price_change before book for ${i.asset_id}`);
            (i.side === 'BUY' ? b.bids : b.asks).set(i.price as string, i.size as string);
          }
        }
        return;
      }
      case 'polymarketUs': {
        const md = m.marketData as Record<string, unknown> | undefined;
        if (!md) return;
        const b = this.book(md.marketSlug as string, true);
        for (const l of md.bids as { px: { value: string }; qty: string }[]) b.bids.set(l.px.value, l.qty);
        for (const l of md.offers as { px: { value: string }; qty: string }[]) b.asks.set(l.px.value, l.qty);
        return;
      }
      case 'gemini': {
        if (m.type !== 'l2_updates') return;
        const b = this.book(m.symbol as string);
        for (const [side, p, q] of m.changes as [string, string, string][])
          (side === 'buy' ? b.bids : b.asks).set(p, q);
        return;
      }
      case 'coinbase': {
        if (m.type === 'snapshot') {
          const b = this.book(m.product_id as string, true);
          for (const [p, q] of m.bids as [string, string][]) b.bids.set(p, q);
          for (const [p, q] of m.asks as [string, string][]) b.asks.set(p, q);
        } else if (m.type === 'l2update') {
          const b = this.books.get(m.product_id as string);
          if (!b) throw new Error(`l2update before snapshot for ${m.product_id}`);
          for (const [side, p, q] of m.changes as [string, string, string][])
            (side === 'buy' ? b.bids : b.asks).set(p, q);
        }
        return;
      }
    }
  }
}

/** Waits until the client's rebuilt book of `market` is the venue's, then returns both (for the assertion). */
export async function settle(
  sim: Simulator,
  client: WsClient,
  books: ClientBooks,
  platform: BookPlatform,
  market: string,
): Promise<{ client: DecimalBook | undefined; venue: DecimalBook }> {
  const venue = () => venueBook(sim, platform, market);
  const same = () => JSON.stringify(books.update(client).view(market)) === JSON.stringify(venue());
  await client.until(same, `${platform} ${market} to equal the venue's book`).catch(() => undefined);
  return { client: books.update(client).view(market), venue: venue() };
}
