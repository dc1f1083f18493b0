/**
 * Column vocabularies shared by the DDL (migrations.ts), the queries (queries.ts) and the insert encoders
 * (inserts.ts). Enum codes are part of the stored data: never renumber them, only append.
 */
import { lit, sql } from './literals';

const SIDE_CODES = { bid: 1, ask: 2 } as const;
/** The kinds of book rows the ticker catalogue counts (migration 1); trades have their own catalogue (migration 3). */
export const FIRST_KINDS: Readonly<Record<string, number>> = { snapshot: 1, delta: 2 };
/** The kinds of book rows (the snapshots and deltas endpoints, their RowBinary layouts). */
export type RowKind = 'snapshot' | 'delta';
/** A trade's side: the taker's, normalised to the book (migration 3). */
export const TRADE_SIDE_CODES = { buy: 1, sell: 2 } as const;
export type TradeSide = keyof typeof TRADE_SIDE_CODES;
export const TRADE_SIDE_ENUM = lit.enum8(TRADE_SIDE_CODES);
/** What a gap interrupts (migration 3): the book, or the trades. */
export const STREAM_CODES = { book: 1, trades: 2 } as const;
export type GapStream = keyof typeof STREAM_CODES;
export const STREAM_ENUM = lit.enum8(STREAM_CODES);
/**
 * Columns a row read may add after the spec's: when the recorder received the row's message, epoch ms (migration 2;
 * rows written before it read as their `ts`), and the venue's own ordering of the message the row came from
 * (migration 4; '' where the venue has none, and on rows written before it).
 */
export const EXTRA_FIELDS = ['received_ts', 'venue_seq'] as const;
export type ExtraField = (typeof EXTRA_FIELDS)[number];
/**
 * Fields a trade read may add (the trades endpoint's `fields`): `received_ts` (as for book rows), the venue's own side
 * field as sent, the ticker's `sequence` (always read: it orders the trades; shown only when asked for), and
 * `venue_seq` (as for book rows).
 */
export const TRADE_EXTRA_FIELDS = ['received_ts', 'venue_side', 'sequence', 'venue_seq'] as const;
export type TradeExtraField = (typeof TRADE_EXTRA_FIELDS)[number];
/**
 * The longest `venue_seq` stored (VENUE_SEQ_PATTERN): window reads take it as a `FixedString` of this width, so that
 * their RowBinary rows keep a fixed width (a shorter value is padded with zero bytes, which the reader drops).
 */
export const VENUE_SEQ_BYTES = 48;
/**
 * How a verification point was obtained (migration 4): the venue's REST book compared with the recorder's, a venue
 * checksum (Polymarket CLOB's `hash`) that matched, or a venue snapshot (a resubscription's) equal to the book.
 */
export const VERIFICATION_METHOD_CODES = { rest_book: 1, checksum: 2, snapshot: 3 } as const;
export type VerificationMethod = keyof typeof VERIFICATION_METHOD_CODES;
export const VERIFICATION_METHODS = Object.keys(VERIFICATION_METHOD_CODES) as VerificationMethod[];
export const VERIFICATION_METHOD_ENUM = lit.enum8(VERIFICATION_METHOD_CODES);
/**
 * How a ticker moved from one recorder's term to another's (migration 6, redundant recording): released by a live
 * owner, taken over from a dead or deposed one, or offered by an owner that lost the ticker's book.
 */
export const HANDOVER_KIND_CODES = { release: 1, takeover: 2, offer: 3 } as const;
export type HandoverKind = keyof typeof HANDOVER_KIND_CODES;
export const HANDOVER_KINDS = Object.keys(HANDOVER_KIND_CODES) as HandoverKind[];
export const HANDOVER_KIND_ENUM = lit.enum8(HANDOVER_KIND_CODES);

/** What a window read returns: book rows of a kind, or trades. */
export type ReadKind = RowKind | 'trade';

/**
 * The exchanges migration 1 created the tables with. Later recorded exchanges join the stored `exchange` Enum8
 * through their migration line (migrations.ts, `exchangesMigration`); the codes are their descriptors'
 * (packages/platforms), part of the stored data.
 */
export const FIRST_EXCHANGES: Readonly<Record<string, number>> = { venue_b: 1, venue_c: 2, venue_a_us: 3 };
/** The name of the column that holds the exchange in every table of the history. */
export const EXCHANGE_COLUMN = 'exchange';
export const SIDE_ENUM = lit.enum8(SIDE_CODES);

/**
 * Prices and quantities: 38 digits, 18 after the point. Kalshi needs 4–6 places, Polymarket US 3, Gemini spot
 * quantities 8 and some prices 9+; 20 integer digits hold any price or size a venue can express. Decimal128 costs 16
 * bytes before compression; the columns compress well because books repeat the same grid values.
 */
export const DECIMAL_TYPE = sql`Decimal(38, 18)`;

/** Table names (inside the configured database). */
export const TABLES = {
  snapshots: 'snapshots',
  deltas: 'deltas',
  trades: 'trades',
  gaps: 'gaps',
  catalogue: 'ticker_catalogue',
  tradesCatalogue: 'trades_catalogue',
  verifications: 'verifications',
  handovers: 'handovers',
  migrations: 'schema_migrations',
} as const;

/**
 * The columns that window queries read, in the order of their RowBinary layouts (the history API's decoder,
 * services/history/src/order-books/row-binary/, reads them by position), with the type each layout assumes, as
 * `system.columns` spells it; `extra` are read after them when a request asks for them (`fields=received_ts`,
 * `fields=venue_seq` — read as `FixedString(VENUE_SEQ_BYTES)`, so it stays among the fixed columns — and for trades
 * `fields=venue_side`, a String), in this order; `tail` always comes last: the columns of variable width (a trade's
 * id), after every fixed one. `verifyReadColumns` (startup.ts) checks them all against the live tables, so a schema
 * that drifted fails at start-up instead of being misread.
 */
export const READ_COLUMNS: Record<
  ReadKind,
  {
    table: string;
    columns: ReadonlyArray<readonly [string, string]>;
    extra: ReadonlyArray<readonly [string, string]>;
    tail: ReadonlyArray<readonly [string, string]>;
  }
> = {
  delta: {
    table: TABLES.deltas,
    columns: [
      ['ts', 'Int64'],
      ['sequence', 'UInt64'],
      ['side', SIDE_ENUM.text],
      ['price', DECIMAL_TYPE.text],
      ['quantity_delta', DECIMAL_TYPE.text],
    ],
    extra: [
      ['received_ts', 'Int64'],
      ['venue_seq', 'String'],
    ],
    tail: [],
  },
  snapshot: {
    table: TABLES.snapshots,
    columns: [
      ['ts', 'Int64'],
      ['side', SIDE_ENUM.text],
      ['price', DECIMAL_TYPE.text],
      ['quantity', DECIMAL_TYPE.text],
    ],
    extra: [
      ['received_ts', 'Int64'],
      ['venue_seq', 'String'],
    ],
    tail: [],
  },
  trade: {
    table: TABLES.trades,
    columns: [
      ['ts', 'Int64'],
      ['sequence', 'UInt64'],
      ['side', TRADE_SIDE_ENUM.text],
      ['price', DECIMAL_TYPE.text],
      ['size', DECIMAL_TYPE.text],
    ],
    extra: [
      ['received_ts', 'Int64'],
      ['venue_seq', 'String'],
      ['venue_side', 'String'],
    ],
    tail: [['trade_id', 'String']],
  },
};
