/**
 * The queries of the history API's trade reads: a window of one ticker's trades, a window of its deltas and trades
 * interleaved in one time order, and the OHLCV bars of a range. OrderBookQueries runs them (order-books.ts), under
 * the same querier, tags and RowBinary habits as the book's window reads.
 *
 * **One row per trade.** A trade stored twice (two writers, a retried insert: docs/history.md, "Trades") is read
 * once: every read takes `LIMIT 1 BY ts, trade_id` over the rows in (ts, sequence, trade_id) order, so of the copies
 * of a trade the one with the smallest sequence is kept, whatever the engine has merged yet (copies from one writer
 * are identical; copies from two writers differ in their sequence and receive time only). The copies of a trade share
 * their ts, so they always fall in the same time window.
 *
 * **Order.** Trades by (ts, sequence) — the order they arrived in, shared with the ticker's deltas — and trade_id
 * after those two (two writers' sequences may collide), so that a cursor's count of the rows sharing a key is exact.
 *
 * **Bars** are aggregated in ClickHouse from the deduplicated trades, with exact decimals: open and close are the
 * price of the first and last trade by (ts, sequence) (`argMin`/`argMax` over the tuple), high and low the extremes,
 * volume the sum of sizes, trades their count. The notional Σ price × size cannot be summed as one Decimal: the
 * product of two Decimal(38, 18) has scale 36 and 2 integer digits. So each factor is split at its 9th decimal place
 * (hi = the value truncated to 9 places, lo = the rest, below 1e-9) and the product summed in three exact parts:
 *
 *   notional_hi  = Σ hi(p)·hi(s)                      Decimal(38, 18)   (exact while the bar's notional < 1e20)
 *   notional_mid = Σ hi(p)·lo(s) + lo(p)·hi(s)        Decimal(38, 27)   (each term < 1e-9 × a factor)
 *   notional_lo  = Σ lo(p)·lo(s)                      Decimal(38, 36)   (each term < 1e-18)
 *
 * which the service adds exactly (BigInt, scale 36) and divides by the volume: the VWAP (its rounding is the
 * service's, docs/history.md "Bars"). Any overflow of the parts raises ClickHouse's decimal overflow error; no value a
 * venue can express comes near it. The trades are deduplicated by a GROUP BY (ts, trade_id) first (the copy with the
 * smallest sequence, as the rows are), which needs no sort.
 *
 *   bar:   ts Int64 | open | high | low | close | volume Decimal(38,18) | trades UInt64 |
 *          notional_hi Decimal(38,18) | notional_mid Decimal(38,27) | notional_lo Decimal(38,36)      (144 bytes)
 *
 * No `toStartOfInterval` (18.16 has none for these): a bar starts at `intDiv(ts, I) * I` (epoch ms, UTC).
 */
import type { ExchangeKey } from '@depthgate/platforms';
import { join, lit, sql, type Sql } from '../literals';
import { READ_COLUMNS, type ReadKind } from '../schema';
import { readColumn, tickerCondition, windowCondition, type DeltaResume, type TimeWindow } from './conditions';

/** What a trade window read adds to the layout's columns. */
export interface TradeReadOptions {
  /** Add `received_ts` after the fixed columns. */
  receivedTs?: boolean;
  /** Add `venue_seq` (a FixedString(VENUE_SEQ_BYTES)) after it. */
  venueSeq?: boolean;
  /** Add `venue_side` (a String) after them. */
  venueSide?: boolean;
  /** Resume at this key of the window's first millisecond (a cursor's position; DeltaResume). */
  resume?: DeltaResume;
}

const identifiers = (names: readonly string[]): Sql =>
  join(
    names.map((n) => lit.identifier(n)),
    ', ',
  );

/** The columns of a trade read, in the RowBinary layout's order: fixed columns, the extras asked for, the id. */
function tradeColumnNames(o: TradeReadOptions): string[] {
  const { columns, extra, tail } = READ_COLUMNS.trade;
  const wanted: Record<string, boolean | undefined> = {
    received_ts: o.receivedTs,
    venue_seq: o.venueSeq,
    venue_side: o.venueSide,
  };
  const asked = extra.filter(([name]) => wanted[name] === true);
  return [...columns, ...asked, ...tail].map(([name]) => name);
}

const TRADE_ORDER = sql`ts, sequence, trade_id`;
const ONE_PER_TRADE = sql`LIMIT 1 BY ts, trade_id`;

/** The resume condition of a first window (rows of its first millisecond before the key are left out). */
function resumeCondition(w: TimeWindow, resume: DeltaResume): Sql {
  return sql`(ts > ${lit.int(w.from)} OR sequence >= ${lit.int(resume.sequence)})`;
}

function limitClause(limit: number, resume: DeltaResume | undefined): Sql {
  const offset = resume !== undefined && resume.skip > 0 ? sql`${lit.int(resume.skip)}, ` : sql``;
  return sql`LIMIT ${offset}${lit.int(limit)}`;
}

/**
 * One ticker's trades in one time window, one row per trade, in (ts, sequence, trade_id) order, at most `limit` of
 * them. A resumed window deduplicates first and leaves out the rows before the key after (a copy of a trade that
 * went out on the previous page must not come back as its other copy).
 */
export function tradeWindowQuery(
  db: Sql,
  exchange: ExchangeKey,
  ticker: string,
  w: TimeWindow,
  limit: number,
  options: TradeReadOptions = {},
): Sql {
  const names = tradeColumnNames(options);
  const columns = join(
    names.map((n) => readColumn(n)),
    ', ',
  );
  const deduplicated = (selected: Sql) => sql`SELECT ${selected}
FROM ${db}.trades
WHERE ${tickerCondition(exchange, ticker)} AND ${windowCondition(w)}
ORDER BY ${TRADE_ORDER}
${ONE_PER_TRADE}`;
  const resume = options.resume;
  if (resume === undefined) {
    return sql`${deduplicated(columns)}
LIMIT ${lit.int(limit)}
FORMAT RowBinary`;
  }
  // (The inner read keeps the stored columns; the outer one shapes them.)
  return sql`SELECT ${columns}
FROM (${deduplicated(identifiers(names))})
WHERE ${resumeCondition(w, resume)}
ORDER BY ${TRADE_ORDER}
${limitClause(limit, resume)}
FORMAT RowBinary`;
}

/**
 * One ticker's deltas and trades in one time window, interleaved by (ts, sequence) — the order they arrived in —
 * at most `limit` rows of either kind. RowBinary rows of the interleaved layout:
 *
 *   ts Int64 | sequence UInt64 | row_kind UInt8 (1 delta, 2 trade) | side UInt8 (delta: 1 bid, 2 ask; trade: 1 buy,
 *   2 sell) | price Decimal(38,18) | amount Decimal(38,18) (quantity_delta, or size) | [received_ts Int64] |
 *   [venue_seq FixedString(VENUE_SEQ_BYTES)] | trade_id String ('' for a delta)
 *
 * Ties of (ts, sequence) — none in recorded data, where the two share the ticker's counter — put a delta first.
 * `received` keeps only the rows received in (from, to] (`received_ts`; needs `receivedTs`): a trade by its copy
 * read (the first), as every read keeps one.
 */
export function interleavedWindowQuery(
  db: Sql,
  exchange: ExchangeKey,
  ticker: string,
  w: TimeWindow,
  limit: number,
  options: {
    receivedTs?: boolean;
    venueSeq?: boolean;
    resume?: DeltaResume;
    received?: { from: number; to: number };
  } = {},
): Sql {
  const where = sql`${tickerCondition(exchange, ticker)} AND ${windowCondition(w)}`;
  const received = options.receivedTs === true ? sql`, received_ts` : sql``;
  const venueSeq = options.venueSeq === true;
  const stored = venueSeq ? sql`, venue_seq` : sql``;
  const fixed = venueSeq ? sql`, ${readColumn('venue_seq')}` : sql``;
  // (An alias that is no column's name: current ClickHouse's analyzer resolves those differently from 18.16.)
  const named = venueSeq ? sql`${fixed} AS venue_seq_text` : sql``;
  const outer = venueSeq ? sql`, venue_seq_text` : sql``;
  const trades = sql`SELECT ts, sequence, side, price, size${received}${stored}, trade_id
  FROM ${db}.trades
  WHERE ${where}
  ORDER BY ${TRADE_ORDER}
  ${ONE_PER_TRADE}`;
  const resume = options.resume;
  const conditions: Sql[] = [];
  if (resume !== undefined) conditions.push(resumeCondition(w, resume));
  if (options.received !== undefined) {
    if (options.receivedTs !== true) throw new Error('a receive-time window reads received_ts');
    const r = options.received;
    conditions.push(sql`received_ts > ${lit.int(r.from)} AND received_ts <= ${lit.int(r.to)}`);
  }
  const after = conditions.length === 0 ? sql`` : sql`\nWHERE ${join(conditions, ' AND ')}`;
  return sql`SELECT ts, sequence, row_kind, side_code, price, amount${received}${outer}, trade_id
FROM (
  SELECT ts, sequence, toUInt8(1) AS row_kind, toUInt8(side) AS side_code, price, quantity_delta AS amount${received}${named}, '' AS trade_id
  FROM ${db}.deltas
  WHERE ${where}
  UNION ALL
  SELECT ts, sequence, toUInt8(2), toUInt8(side), price, size${received}${fixed}, trade_id
  FROM (${trades})
)${after}
ORDER BY ts, sequence, row_kind, trade_id
${limitClause(limit, resume)}
FORMAT RowBinary`;
}

/** Whether a trade, or (interleaved) a delta or a trade, of one ticker exists in [from, to]; stops at the first. */
export function tradeRowExistsQuery(
  db: Sql,
  kind: 'trade' | 'interleaved',
  exchange: ExchangeKey,
  ticker: string,
  from: number,
  to: number | null,
): Sql {
  const where = sql`${tickerCondition(exchange, ticker)} AND ${windowCondition({ from, to, toInclusive: true })}`;
  if (kind === 'trade') return sql`SELECT ts FROM ${db}.trades WHERE ${where} LIMIT 1`;
  return sql`SELECT ts FROM (
  SELECT ts FROM (SELECT ts FROM ${db}.deltas WHERE ${where} LIMIT 1)
  UNION ALL
  SELECT ts FROM (SELECT ts FROM ${db}.trades WHERE ${where} LIMIT 1)
) LIMIT 1`;
}

/**
 * The last trade of one ticker at or before `at` on a clock (`ts`, the venue's time, or `received_ts`, when it was
 * received) among the trades with `ts` ≥ `lower`: of the trades at the newest such moment, the last to arrive (the
 * largest sequence, then trade_id), one row per trade (the copy with the smallest sequence, as every read). One
 * query: the newest moment is a scalar subquery that reads the ticker's clock column only, the trade is read from
 * that moment's rows. `lower` bounds `ts` on either clock: it is the column a caller's window is on, and the sort
 * key's, so it also bounds what is read (`received_ts` is in no sort key). JSONEachRow: ts, sequence, trade_id, price
 * and size as text, side, venue_side, received_ts; no row when the ticker has no such trade.
 */
export function lastTradeQuery(
  db: Sql,
  exchange: ExchangeKey,
  ticker: string,
  lower: number,
  at: number,
  clock: 'ts' | 'received_ts' = 'ts',
): Sql {
  const key = sql`${tickerCondition(exchange, ticker)} AND ts >= ${lit.int(lower)}`;
  const column = lit.identifier(clock);
  return sql`SELECT ts, sequence, trade_id, toString(price) AS price_text, toString(size) AS size_text,
  toString(side) AS side_name, venue_side, received_ts
FROM (
  SELECT ts, sequence, trade_id, price, size, side, venue_side, received_ts
  FROM ${db}.trades
  WHERE ${key} AND ${column} = (SELECT max(${column}) FROM ${db}.trades WHERE ${key} AND ${column} <= ${lit.int(at)})
  ORDER BY ${TRADE_ORDER}
  ${ONE_PER_TRADE}
)
ORDER BY sequence DESC, trade_id DESC
LIMIT 1`;
}

/**
 * Where a receive-time window of one ticker lies on the venue clock (one query of scalar subqueries, each reading
 * the ticker's `ts` and `received_ts` columns only — `received_ts` is in no sort key): `snapshot_ts`, the newest
 * snapshot received at or before `from`; `book_last_ts`, the newest delta received by then; `rows`, `first_ts`,
 * `last_ts`, how many deltas and trades were received in (`from`, `to`] and their first and last `ts`. 0 for none.
 */
export function receiveSpanQuery(db: Sql, exchange: ExchangeKey, ticker: string, from: number, to: number): Sql {
  const key = tickerCondition(exchange, ticker);
  const by = sql`received_ts <= ${lit.int(from)}`;
  const inside = sql`received_ts > ${lit.int(from)} AND received_ts <= ${lit.int(to)}`;
  const rows = sql`SELECT ts FROM ${db}.deltas WHERE ${key} AND ${inside}
    UNION ALL SELECT ts FROM ${db}.trades WHERE ${key} AND ${inside}`;
  return sql`SELECT (SELECT max(ts) FROM ${db}.snapshots WHERE ${key} AND ${by}) AS snapshot_ts,
  (SELECT max(ts) FROM ${db}.deltas WHERE ${key} AND ${by}) AS book_last_ts,
  (SELECT count() FROM (${rows})) AS n_rows,
  (SELECT min(ts) FROM (${rows})) AS first_ts,
  (SELECT max(ts) FROM (${rows})) AS last_ts`;
}

/** The bars' intervals and their length in ms. */
export const BAR_INTERVALS = { '1m': 60_000, '5m': 300_000, '1h': 3_600_000, '1d': 86_400_000 } as const;
export type BarInterval = keyof typeof BAR_INTERVALS;

/** The RowBinary layout of barsQuery's rows: offsets and size. */
export const BAR_LAYOUT = {
  ts: 0,
  open: 8,
  high: 24,
  low: 40,
  close: 56,
  volume: 72,
  trades: 88,
  notionalHi: 96,
  notionalMid: 112,
  notionalLo: 128,
  size: 144,
} as const;

/**
 * The bars of one ticker over the trades with `from` ≤ ts < `to` (to null: open), one per interval holding at least
 * one trade (bars without trades are absent), by their start, at most `limit` (BAR_LAYOUT rows; see the module
 * comment).
 */
export function barsQuery(
  db: Sql,
  exchange: ExchangeKey,
  ticker: string,
  intervalMs: number,
  from: number,
  to: number | null,
  limit: number,
  format: 'RowBinary' | 'JSONEachRow' = 'RowBinary',
): Sql {
  const where = sql`${tickerCondition(exchange, ticker)} AND ${windowCondition({ from, to, toInclusive: false })}`;
  const hi = (v: Sql) => sql`CAST(${v} AS Decimal(38, 9))`;
  const lo = (v: Sql) => sql`(${v} - CAST(${v} AS Decimal(38, 9)))`;
  const p = sql`trade_price`;
  const s = sql`trade_size`;
  const interval = lit.int(intervalMs);
  return sql`SELECT intDiv(ts, ${interval}) * ${interval} AS bar_ts,
  argMin(${p}, tuple(ts, first_sequence)) AS open_price,
  max(${p}) AS high_price,
  min(${p}) AS low_price,
  argMax(${p}, tuple(ts, first_sequence)) AS close_price,
  sum(${s}) AS volume,
  count() AS trade_count,
  sum(${hi(p)} * ${hi(s)}) AS notional_hi,
  sum(${hi(p)} * ${lo(s)} + ${lo(p)} * ${hi(s)}) AS notional_mid,
  sum(${lo(p)} * ${lo(s)}) AS notional_lo
FROM (
  SELECT ts, trade_id, min(sequence) AS first_sequence, argMin(price, sequence) AS trade_price,
    argMin(size, sequence) AS trade_size
  FROM ${db}.trades
  WHERE ${where}
  GROUP BY ts, trade_id
)
GROUP BY bar_ts
ORDER BY bar_ts
LIMIT ${lit.int(limit)}
FORMAT ${format === 'JSONEachRow' ? sql`JSONEachRow` : sql`RowBinary`}`;
}

/** The kinds the catalogue knows spans of (the book's catalogue per kind, the trades' own). */
export const CATALOGUE_KINDS: ReadonlySet<string> = new Set<ReadKind>(['snapshot', 'delta', 'trade']);
