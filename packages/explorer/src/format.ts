/**
 * Text for people: times in UTC (the service's timestamps are UTC), lengths of time, and the book's figures computed
 * exactly with @depthgate/client's Decimal (never JavaScript number arithmetic on prices or sizes). Numbers appear
 * only where a chart needs a pixel position (`plotNumber`).
 */
import { Decimal, formatTimestamp } from '@depthgate/client';

/** `2026-11-23 11:33:48.630` (UTC; the page says so once per table or field). */
export function showTime(ms: number): string {
  return formatTimestamp(ms).replace('T', ' ').replace('Z', '');
}

/** The value of an `<input type="datetime-local" step="0.001">` for a moment, read as UTC. */
export function toLocalInput(ms: number): string {
  return formatTimestamp(ms).replace('Z', '');
}

/** A `datetime-local` value (`YYYY-MM-DDTHH:MM[:SS[.mmm]]`) read as UTC; NaN when it is not one. */
export function fromLocalInput(text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?$/.exec(text.trim());
  if (!m) return NaN;
  const [, y, mo, d, h, mi, s = '0', f = '0'] = m;
  const ms = Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s, +f.padEnd(3, '0'));
  // Date.UTC rolls impossible dates over (31 April → 1 May): refuse those.
  return formatTimestamp(ms).startsWith(`${y}-${mo}-${d}T${h}:${mi}`) ? ms : NaN;
}

/** `850 ms`, `4.6 s`, `12 min 5 s`, `3 h 20 min`, `2 d 4 h`. */
export function showDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1).replace(/\.0$/, '')} s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  if (s < 86_400) {
    const m = Math.floor((s % 3600) / 60);
    return `${Math.floor(s / 3600)} h${m ? ` ${m} min` : ''}`;
  }
  const h = Math.floor((s % 86_400) / 3600);
  return `${Math.floor(s / 86_400)} d${h ? ` ${h} h` : ''}`;
}

/** `1,234,567` for counts. */
export function showCount(n: number): string {
  return n.toLocaleString('en-US');
}

export interface Level {
  price: string;
  quantity: string;
}

export interface LevelWithTotal extends Level {
  /** The quantity of this level and every better one on its side, exact. */
  total: string;
}

/** Running totals from the best level outwards (levels come best first). */
export function withTotals(levels: readonly Level[]): LevelWithTotal[] {
  let total = Decimal.ZERO;
  return levels.map((l) => {
    total = total.add(l.quantity);
    return { ...l, total: total.toString() };
  });
}

export interface Best {
  bid?: Level;
  ask?: Level;
  /** ask − bid, exact; undefined unless both sides have a level. */
  spread?: string;
  /** (ask + bid) / 2, exact. */
  mid?: string;
}

export function bestOf(bids: readonly Level[], asks: readonly Level[]): Best {
  const bid = bids[0];
  const ask = asks[0];
  if (!bid || !ask) return { bid, ask };
  const b = Decimal.parse(bid.price);
  const a = Decimal.parse(ask.price);
  return { bid, ask, spread: a.sub(b).toString(), mid: a.add(b).half().toString() };
}

/**
 * A decimal string as a JavaScript number, for a chart's pixel position only (a price of 18 significant digits
 * loses its last ones, which no screen can show). Never used for arithmetic on prices or sizes.
 */
export function plotNumber(text: string): number {
  return Number(text);
}

/**
 * The depth chart's data: x = price (ascending), one y per side = the running total at that price, null off its
 * side. Bids run from the lowest shown price up to the best bid, asks from the best ask up.
 */
export function depthSeries(
  bids: readonly Level[],
  asks: readonly Level[],
): { x: number[]; bids: (number | null)[]; asks: (number | null)[] } {
  const b = withTotals(bids).reverse();
  const a = withTotals(asks);
  return {
    x: [...b.map((l) => plotNumber(l.price)), ...a.map((l) => plotNumber(l.price))],
    bids: [...b.map((l) => plotNumber(l.total)), ...a.map(() => null)],
    asks: [...b.map(() => null), ...a.map((l) => plotNumber(l.total))],
  };
}
