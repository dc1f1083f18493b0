/**
 * WebSocket test helpers (not part of the build): the shared test client (`@depthgate/test-utils`), and each
 * platform's book as a client rebuilds it from the messages it got — written from the platforms' documented formats,
 * independently of the gateway's own book-keeping — to compare with the venue's book (the simulator's truth).
 */
import { WsTestClient, type WsOpenOptions } from '@depthgate/test-utils';
import type { DecimalBook, Simulator } from '@depthgate/venue-sim';

export { WsTestClient as WsClient } from '@depthgate/test-utils';

/** A refused handshake's status and JSON body (the gateway's refusals are JSON). */
export async function refused(url: string, o: WsOpenOptions = {}): Promise<{ status: number; body: unknown }> {
  const r = await WsTestClient.refused(url, o);
  return { status: r.status, body: r.json ?? r.body };
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

export type BookPlatform = 'venue-b' | 'venue-a-clob' | 'venue-a-us' | 'venue-c' | 'venue-d';

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
  update(client: WsTestClient): this {
    for (; this.applied < client.messages.length; this.applied++) this.apply(client.messages[this.applied] ?? {});
    return this;
  }

  view(market: string): DecimalBook | undefined {
    return this.books.get(market)?.view();
  }

  apply(m: Record<string, unknown>): void {
    switch (this.platform) {
      case 'venue-b': {
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
      case 'venue-a-clob': {
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
      case 'venue-a-us': {
        const md = m.marketData as Record<string, unknown> | undefined;
        if (!md) return;
        const b = this.book(md.marketSlug as string, true);
        for (const l of md.bids as { px: { value: string }; qty: string }[]) b.bids.set(l.px.value, l.qty);
        for (const l of md.offers as { px: { value: string }; qty: string }[]) b.asks.set(l.px.value, l.qty);
        return;
      }
      case 'venue-c': {
        if (m.type !== 'l2_updates') return;
        const b = this.book(m.symbol as string);
        for (const [side, p, q] of m.changes as [string, string, string][])
          (side === 'buy' ? b.bids : b.asks).set(p, q);
        return;
      }
      case 'venue-d': {
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
  client: WsTestClient,
  books: ClientBooks,
  platform: BookPlatform,
  market: string,
): Promise<{ client: DecimalBook | undefined; venue: DecimalBook }> {
  const venue = () => venueBook(sim, platform, market);
  const same = () => JSON.stringify(books.update(client).view(market)) === JSON.stringify(venue());
  await client.until(same, `${platform} ${market} to equal the venue's book`).catch(() => undefined);
  return { client: books.update(client).view(market), venue: venue() };
}
