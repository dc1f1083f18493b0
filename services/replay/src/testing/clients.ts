/**
 * Reference clients for the engine's tests, each written from its venue's documented rules (protocols.md): it applies
 * the venue's snapshot and changes to a book of its own, checks what the venue lets a client check (Kalshi's `seq`
 * contiguity per `sid`, the CLOB's `hash` on every `book` and `price_change` entry, recomputed with `clobBookHash`),
 * and collects the trades. A rule broken throws. Books are kept as the recorder stores them (Kalshi's as the YES
 * book), exact.
 */
import { clobBookHash, complementOfOne, formatDecimal, parseDecimal, type ClobLevel } from '@depthgate/feeds';
import type { ExactBook, SideMap } from './history';

export interface ReferenceClient {
  consume(text: string): void;
  /** The client's book, undefined before its first whole book. */
  book(): ExactBook | undefined;
  /** The trades received, each as `ts|price|size|taker side` (canonical) plus the id where the venue sends one. */
  readonly trades: string[];
  /** Whether a message is the venue's whole-book (snapshot or reset) form. */
  isWholeBook(text: string): boolean;
}

const canon = (text: string) => formatDecimal(parseDecimal(text));

function fail(message: string): never {
  throw new Error(message);
}

function setAbsolute(side: SideMap, price: string, size: string): void {
  const q = parseDecimal(size);
  if (q < 0n) fail(`negative size ${size}`);
  if (q === 0n) side.delete(canon(price));
  else side.set(canon(price), q);
}

const empty = (): ExactBook => ({ bids: new Map(), asks: new Map() });

/** Kalshi: snapshot replaces the market's YES and NO bids; a delta adds `delta_fp`; `seq` contiguous per `sid`. */
export class KalshiClient implements ReferenceClient {
  private yes: SideMap | undefined;
  private no: SideMap = new Map();
  private readonly seqs = new Map<number, number>();
  readonly trades: string[] = [];

  /** `checkSeq` false: the client sees one market of a subscription whose other markets take seq values too. */
  constructor(private readonly checkSeq = true) {}

  consume(text: string): void {
    const m = JSON.parse(text) as { type: string; sid: number; seq?: number; msg: Record<string, unknown> };
    if (this.checkSeq && (m.type === 'orderbook_snapshot' || m.type === 'orderbook_delta')) {
      if (typeof m.seq !== 'number') fail('book message without seq');
      const last = this.seqs.get(m.sid);
      if (last !== undefined && m.seq !== last + 1) fail(`seq ${m.seq} after ${last} on sid ${m.sid}`);
      if (last === undefined && m.type !== 'orderbook_snapshot') fail('a delta before the snapshot');
      this.seqs.set(m.sid, m.seq);
    }
    const msg = m.msg;
    if (m.type === 'orderbook_snapshot') {
      const side = (list: unknown) => {
        const out: SideMap = new Map();
        for (const [p, q] of (list ?? []) as [string, string][]) out.set(canon(p), parseDecimal(q));
        return out;
      };
      this.yes = side(msg.yes_dollars_fp);
      this.no = side(msg.no_dollars_fp);
    } else if (m.type === 'orderbook_delta') {
      if (!this.yes) fail('delta before a snapshot');
      const side = msg.side === 'yes' ? this.yes : this.no;
      const price = canon(msg.price_dollars as string);
      const q = (side.get(price) ?? 0n) + parseDecimal(msg.delta_fp as string);
      if (q < 0n) fail(`level ${price} below zero`);
      if (q === 0n) side.delete(price);
      else side.set(price, q);
      if (msg.ts_ms === undefined) fail('delta without ts_ms');
    } else if (m.type === 'trade') {
      if ('seq' in m) fail('a trade with seq');
      if (canon(complementOfOne(msg.yes_price_dollars as string)) !== canon(msg.no_price_dollars as string))
        fail('yes + no price is not 1');
      const side = msg.taker_outcome_side === 'yes' ? 'buy' : 'sell';
      this.trades.push(
        `${String(msg.ts_ms)}|${canon(msg.yes_price_dollars as string)}|${canon(msg.count_fp as string)}|${side}|${String(msg.trade_id)}`,
      );
    } else fail(`unexpected ${m.type}`);
  }

  book(): ExactBook | undefined {
    if (!this.yes) return undefined;
    const asks: SideMap = new Map();
    for (const [p, q] of this.no) asks.set(canon(complementOfOne(p)), q);
    return { bids: new Map(this.yes), asks };
  }

  isWholeBook(text: string): boolean {
    return (JSON.parse(text) as { type: string }).type === 'orderbook_snapshot';
  }
}

/** Gemini v2: the first-message form (with `trades`) is the whole book; `l2_updates` set absolute quantities. */
export class GeminiClient implements ReferenceClient {
  private current: ExactBook | undefined;
  readonly trades: string[] = [];

  consume(text: string): void {
    const m = JSON.parse(text) as Record<string, unknown>;
    if (m.type === 'l2_updates') {
      if ('trades' in m) this.current = empty();
      if (!this.current) fail('l2_updates before the first one');
      for (const [side, price, quantity] of m.changes as [string, string, string][])
        setAbsolute(side === 'buy' ? this.current.bids : this.current.asks, price, quantity);
    } else if (m.type === 'trade') {
      // tid is a JSON integer: read from the text so that no digit is lost.
      const tid = /"tid":(\d+)/.exec(text)?.[1] ?? fail('trade without tid');
      this.trades.push(
        `${String(m.timestamp)}|${canon(m.price as string)}|${canon(m.quantity as string)}|${String(m.side)}|${tid}`,
      );
    } else fail(`unexpected ${String(m.type)}`);
  }

  book(): ExactBook | undefined {
    return this.current;
  }

  isWholeBook(text: string): boolean {
    const m = JSON.parse(text) as Record<string, unknown>;
    return m.type === 'l2_updates' && 'trades' in m;
  }
}

/** Coinbase level2 + matches: `snapshot` replaces, `l2update` sets sizes; `match` side is the maker's. */
export class CoinbaseClient implements ReferenceClient {
  private current: ExactBook | undefined;
  readonly trades: string[] = [];
  lastMatch: string | undefined;

  consume(text: string): void {
    const m = JSON.parse(text) as Record<string, unknown>;
    if (m.type === 'snapshot') {
      this.current = empty();
      for (const [p, q] of m.bids as [string, string][]) setAbsolute(this.current.bids, p, q);
      for (const [p, q] of m.asks as [string, string][]) setAbsolute(this.current.asks, p, q);
    } else if (m.type === 'l2update') {
      if (!this.current) fail('l2update before a snapshot');
      for (const [side, price, size] of m.changes as [string, string, string][])
        setAbsolute(side === 'buy' ? this.current.bids : this.current.asks, price, size);
      if (Number.isNaN(Date.parse(m.time as string))) fail('l2update without time');
    } else if (m.type === 'match' || m.type === 'last_match') {
      const tradeId = /"trade_id":(\d+)/.exec(text)?.[1] ?? fail('match without trade_id');
      const taker = m.side === 'buy' ? 'sell' : 'buy';
      const key = `${Date.parse(m.time as string)}|${canon(m.price as string)}|${canon(m.size as string)}|${taker}|${tradeId}`;
      if (m.type === 'last_match') this.lastMatch = key;
      else this.trades.push(key);
    } else fail(`unexpected ${String(m.type)}`);
  }

  book(): ExactBook | undefined {
    return this.current;
  }

  isWholeBook(text: string): boolean {
    return (JSON.parse(text) as { type: string }).type === 'snapshot';
  }
}

/** Polymarket US: every MARKET_DATA message is the whole book; trades on the TRADE subscription. */
export class PmUsClient implements ReferenceClient {
  private current: ExactBook | undefined;
  readonly trades: string[] = [];

  consume(text: string): void {
    const m = JSON.parse(text) as Record<string, unknown>;
    if (m.subscriptionType === 'SUBSCRIPTION_TYPE_MARKET_DATA') {
      const data = m.marketData as { bids: { px: { value: string }; qty: string }[]; offers: typeof data.bids };
      this.current = empty();
      for (const l of data.bids) setAbsolute(this.current.bids, l.px.value, l.qty);
      for (const l of data.offers) setAbsolute(this.current.asks, l.px.value, l.qty);
    } else if (m.subscriptionType === 'SUBSCRIPTION_TYPE_TRADE') {
      const t = m.trade as {
        price: { value: string };
        quantity: { value: string };
        tradeTime: string;
        taker: { side: string };
      };
      const side = t.taker.side === 'ORDER_SIDE_BUY' ? 'buy' : 'sell';
      this.trades.push(`${Date.parse(t.tradeTime)}|${canon(t.price.value)}|${canon(t.quantity.value)}|${side}`);
    } else fail(`unexpected ${text.slice(0, 80)}`);
  }

  book(): ExactBook | undefined {
    return this.current;
  }

  isWholeBook(text: string): boolean {
    return text.includes('"SUBSCRIPTION_TYPE_MARKET_DATA"');
  }
}

/**
 * Polymarket CLOB market channel: `book` replaces the asset's book; `price_change` entries set sizes in order; every
 * `book` and every entry's `hash` is checked against the client's own book (`clobBookHash`, with the asset's
 * settings from its `book` and the last trade price from `last_trade_price`).
 */
export class ClobClient implements ReferenceClient {
  private current: ExactBook | undefined;
  private settings: { market: string; min_order_size: string; tick_size: string; neg_risk: boolean } | undefined;
  private lastTradePrice = '';
  readonly trades: string[] = [];
  hashesChecked = 0;

  constructor(private readonly asset: string) {}

  private hash(timestamp: string): string {
    const book = this.current ?? fail('no book');
    const s = this.settings ?? fail('no settings');
    const side = (map: SideMap, order: 1 | -1): ClobLevel[] =>
      [...map]
        .sort((a, b) => (parseDecimal(a[0]) < parseDecimal(b[0]) ? -order : order))
        .map(([price, q]) => ({ price, size: formatDecimal(q) }));
    return clobBookHash({
      market: s.market,
      asset_id: this.asset,
      timestamp,
      bids: side(book.bids, 1),
      asks: side(book.asks, -1),
      min_order_size: s.min_order_size,
      tick_size: s.tick_size,
      neg_risk: s.neg_risk,
      last_trade_price: this.lastTradePrice,
    });
  }

  consume(text: string): void {
    const m = JSON.parse(text) as Record<string, unknown>;
    if (m.event_type === 'book') {
      if (m.asset_id !== this.asset) fail('book of another asset');
      this.current = empty();
      for (const l of m.bids as ClobLevel[]) setAbsolute(this.current.bids, l.price, l.size);
      for (const l of m.asks as ClobLevel[]) setAbsolute(this.current.asks, l.price, l.size);
      this.settings = {
        market: m.market as string,
        min_order_size: m.min_order_size as string,
        tick_size: m.tick_size as string,
        neg_risk: m.neg_risk as boolean,
      };
      this.lastTradePrice = m.last_trade_price as string;
      if (this.hash(m.timestamp as string) !== m.hash) fail(`book hash mismatch at ${String(m.timestamp)}`);
      this.hashesChecked++;
    } else if (m.event_type === 'price_change') {
      if (!this.current) fail('price_change before a book');
      for (const e of m.price_changes as Record<string, string>[]) {
        if (e.asset_id !== this.asset) continue;
        setAbsolute(e.side === 'BUY' ? this.current.bids : this.current.asks, e.price as string, e.size as string);
        if (this.hash(m.timestamp as string) !== e.hash) fail(`price_change hash mismatch at ${String(m.timestamp)}`);
        this.hashesChecked++;
        const best = (map: SideMap, higher: boolean) =>
          [...map.keys()].reduce<string | undefined>(
            (b, p) => (b === undefined || parseDecimal(p) > parseDecimal(b) === higher ? p : b),
            undefined,
          ) ?? '0';
        if (e.best_bid !== best(this.current.bids, true) || e.best_ask !== best(this.current.asks, false))
          fail('best bid/ask differ');
      }
    } else if (m.event_type === 'last_trade_price') {
      this.lastTradePrice = m.price as string;
      this.trades.push(
        `${String(m.timestamp)}|${canon(m.price as string)}|${canon(m.size as string)}|${m.side === 'BUY' ? 'buy' : 'sell'}`,
      );
    } else fail(`unexpected ${String(m.event_type)}`);
  }

  book(): ExactBook | undefined {
    return this.current;
  }

  isWholeBook(text: string): boolean {
    return (JSON.parse(text) as { event_type: string }).event_type === 'book';
  }
}
