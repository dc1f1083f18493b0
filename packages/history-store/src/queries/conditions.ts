/**
 * The conditions every window read of one ticker shares (order-books.ts, trades.ts): the ticker (the leading columns
 * of every table's sort key) and a time window on `ts`, and where a read resumes inside its first window.
 */
import type { ExchangeKey } from '@depthgate/platforms';
import { lit, sql, type Sql } from '../literals';
import { VENUE_SEQ_BYTES } from '../schema';

export interface TimeWindow {
  /** Inclusive lower bound, epoch ms. */
  from: number;
  /** Upper bound, epoch ms; inclusive when `toInclusive`, else exclusive. `null`: unbounded. */
  to: number | null;
  toInclusive: boolean;
}

export function windowCondition(w: TimeWindow): Sql {
  const lower = sql`ts >= ${lit.int(w.from)}`;
  if (w.to === null) return lower;
  return w.toInclusive ? sql`${lower} AND ts <= ${lit.int(w.to)}` : sql`${lower} AND ts < ${lit.int(w.to)}`;
}

export const tickerCondition = (exchange: ExchangeKey, ticker: string): Sql =>
  sql`exchange = ${lit.exchange(exchange)} AND ticker = ${lit.ticker(ticker)}`;

/**
 * Where a delta read resumes inside its first window (a cursor's position): at the row (window.from, `sequence`),
 * leaving out the first `skip` rows that carry exactly that (ts, sequence) — they went out on the previous page.
 * Counting them instead of reading strictly after the key keeps a page boundary exact even between rows that share
 * both values.
 */
export interface DeltaResume {
  sequence: bigint;
  skip: number;
}

/**
 * A column as a window read selects it (schema.ts READ_COLUMNS): `venue_seq` as a `FixedString(VENUE_SEQ_BYTES)` —
 * zero-padded, so the rows keep a fixed width whatever the venue's text; cut to that width first, so that a longer
 * value written past the encoders (VENUE_SEQ_PATTERN) cannot fail the read — every other column as it is.
 */
export function readColumn(name: string): Sql {
  const width = lit.int(VENUE_SEQ_BYTES);
  return name === 'venue_seq' ? sql`toFixedString(substring(venue_seq, 1, ${width}), ${width})` : lit.identifier(name);
}
