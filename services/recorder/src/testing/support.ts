/**
 * Helpers for the recorder's tests (src/testing/: not part of the build): a sink that keeps rows as objects, and rule-7 book
 * arithmetic over those rows.
 */
import type { ExchangeKey } from '@depthgate/platforms';
import { SIDE_NAME, type LocalBook, type SideCode, formatDecimal, parseDecimal } from '@depthgate/feeds';
import type { RowSink } from '../rows';

export interface Row {
  kind: 'delta' | 'snapshot' | 'gap';
  exchange: ExchangeKey;
  ticker: string;
  ts: number;
  sequence?: number;
  side?: 'bid' | 'ask';
  price?: string;
  quantity?: string;
  quantityDelta?: string;
  fromTs?: number;
  toTs?: number;
  reason?: string;
}

export class ListSink implements RowSink {
  readonly rows: Row[] = [];

  delta(
    exchange: ExchangeKey,
    ticker: string,
    ts: number,
    sequence: number,
    side: SideCode,
    price: string,
    quantityDelta: string,
  ): void {
    this.rows.push({ kind: 'delta', exchange, ticker, ts, sequence, side: SIDE_NAME[side], price, quantityDelta });
  }

  snapshot(exchange: ExchangeKey, ticker: string, ts: number, book: LocalBook): void {
    for (const [side, levels] of [
      ['bid', book.bids],
      ['ask', book.asks],
    ] as const) {
      for (const [price, level] of levels) {
        this.rows.push({ kind: 'snapshot', exchange, ticker, ts, side, price, quantity: formatDecimal(level.q) });
      }
    }
  }

  gap(exchange: ExchangeKey, ticker: string, fromTs: number, toTs: number, reason: string): void {
    this.rows.push({ kind: 'gap', exchange, ticker, ts: toTs, fromTs, toTs, reason });
  }

  of(kind: Row['kind']): Row[] {
    return this.rows.filter((r) => r.kind === kind);
  }

  clear(): void {
    this.rows.length = 0;
  }
}

/** A book as `side:canonicalPrice` → canonical quantity. */
export type FlatBook = Record<string, string>;

export function flat(levels: { bids: [string, string][]; asks: [string, string][] }): FlatBook {
  const out: FlatBook = {};
  for (const [p, q] of levels.bids)
    if (parseDecimal(q) !== 0n) out[`bid:${formatDecimal(parseDecimal(p))}`] = formatDecimal(parseDecimal(q));
  for (const [p, q] of levels.asks)
    if (parseDecimal(q) !== 0n) out[`ask:${formatDecimal(parseDecimal(p))}`] = formatDecimal(parseDecimal(q));
  return out;
}

/**
 * The spec's rule 7 over rows: the latest snapshot at or before T, then every delta with snapshot ts <= ts <= T in
 * (ts, sequence) order, adding quantity_delta per (side, price) and removing a level at zero. Undefined when no
 * snapshot precedes T.
 */
export function rebuild(rows: readonly Row[], t: number): FlatBook | undefined {
  let s = -1;
  for (const r of rows) if (r.kind === 'snapshot' && r.ts <= t && r.ts > s) s = r.ts;
  if (s < 0) return undefined;
  const book = new Map<string, bigint>();
  for (const r of rows) {
    if (r.kind === 'snapshot' && r.ts === s) book.set(`${r.side}:${r.price}`, parseDecimal(r.quantity ?? '0'));
  }
  const deltas = rows
    .filter((r) => r.kind === 'delta' && r.ts >= s && r.ts <= t)
    .sort((a, b) => a.ts - b.ts || (a.sequence ?? 0) - (b.sequence ?? 0));
  for (const d of deltas) {
    const key = `${d.side}:${formatDecimal(parseDecimal(d.price ?? '0'))}`;
    const q = (book.get(key) ?? 0n) + parseDecimal(d.quantityDelta ?? '0');
    if (q === 0n) book.delete(key);
    else book.set(key, q);
  }
  const out: FlatBook = {};
  for (const [k, q] of book) out[k] = formatDecimal(q);
  return out;
}
