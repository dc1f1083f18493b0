/**
 * The bodies of the history service's answers, as zod schemas: the one definition the OpenAPI document
 * (`/openapi.json`, contract/openapi.ts) is generated from, the integration tests validate every answer against, and
 * @depthgate/client's types are checked against (client-types.test.ts).
 *
 * These are never run on the hot path: rows are rendered straight from ClickHouse's bytes (order-books/row-binary.ts)
 * and streamed; the schemas describe what comes out. Objects are closed (zod's output mode: no field beyond those
 * listed), so a field added or renamed by accident breaks the contract in the tests.
 */
import * as z from 'zod';
import { BAR_INTERVALS, VENUE_SEQ_PATTERN, type BarInterval } from '@depthgate/history-store';

/** UTC RFC 3339 with exactly three fractional digits, as every answer writes a moment. */
export const Timestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  .meta({
    id: 'Timestamp',
    format: 'date-time',
    description: 'UTC RFC 3339 with exactly three fractional digits',
    examples: ['2026-03-26T14:00:01.193Z'],
  });

/** An exact decimal in canonical text: no exponent, no `+`, no trailing fractional zeros, no bare point. */
export const Decimal = z
  .string()
  .regex(/^-?[0-9]+(\.[0-9]*[1-9])?$/)
  .meta({
    id: 'Decimal',
    description: 'Exact decimal; trailing fractional zeros are not written',
    examples: ['0.48', '150', '-20.5'],
  });

export const Side = z.enum(['bid', 'ask']).meta({ description: 'The book’s side' });
export const TradeSide = z.enum(['buy', 'sell']).meta({
  description:
    'The taker’s side, normalised to the book: buy lifted an ask, sell hit a bid (Kalshi: a taker buying NO sells YES; Coinbase’s own side, the maker’s, is inverted)',
});

const receivedTs = Timestamp.optional().meta({
  description:
    'With fields=received_ts only: when the recorder received it (rows recorded before receive times were kept: ts)',
});
const venueSeq = z
  .string()
  .regex(VENUE_SEQ_PATTERN)
  .optional()
  .meta({
    description:
      'With fields=venue_seq only: the venue’s own ordering of the message the row came from (Kalshi sid:seq, Coinbase sequence, …), empty where the venue has none or the row was recorded before it was kept',
    examples: ['3:1042', '89455013270', ''],
  });
const ts = Timestamp.meta({ description: 'The venue’s time of the book or change (rows are sorted by it)' });
const price = Decimal.meta({ description: 'The level’s price' });
const exchange = z.string().meta({ description: 'The neutral exchange key (whatever alias the path used)' });
const ticker = z.string().meta({ description: 'The ticker as stored' });

/** One price level of a full book at `ts`. Field order is the wire's (and the CSV columns', csvColumns). */
export const SnapshotRow = z
  .object({
    ts,
    side: Side,
    price,
    quantity: Decimal.meta({ description: 'The quantity at the level (every row of a book shares its ts)' }),
    received_ts: receivedTs,
    venue_seq: venueSeq,
  })
  .meta({ id: 'SnapshotRow' });

/** A recorded book as its digest (`format=digest` on the snapshots stream): one line per book instead of its rows. */
export const DigestLine = z
  .object({
    ts: Timestamp.meta({ description: 'The book’s ts (that of each of its rows)' }),
    levels: z.number().int().min(0).meta({ description: 'Its levels (its rows of a quantity above 0)' }),
    digest: z
      .string()
      .regex(/^(0|[1-9][0-9]{0,18})$/)
      .meta({
        description:
          'Σ quantity · weight over its levels modulo 2^61 − 1, in decimal: the book digest that @depthgate/client’s OrderBook.digest() keeps current delta by delta (docs/history.md, "Book digests")',
      }),
  })
  .meta({ id: 'DigestLine' });

/** One level change: add `quantity_delta` at (`side`, `price`). */
export const DeltaRow = z
  .object({
    ts,
    sequence: z.number().int().min(0).meta({ description: 'Orders the deltas of a ticker that share a ts' }),
    side: Side,
    price,
    quantity_delta: Decimal.meta({ description: 'To add to the quantity at (side, price); a level at 0 is gone' }),
    received_ts: receivedTs,
    venue_seq: venueSeq,
  })
  .meta({ id: 'DeltaRow' });

/** One trade. Field order is the wire's (and the CSV columns', csvColumns); the optional ones only with `fields`. */
export const TradeRow = z
  .object({
    ts: Timestamp.meta({ description: 'The venue’s time of the trade (trades are sorted by it, then by sequence)' }),
    trade_id: z.string().meta({
      description:
        'The venue’s trade id, or where the venue gives none a deterministic one: h: and 16 hex digits (docs/history-internals.md, Recorder: Trades)',
    }),
    price: Decimal.meta({ description: 'The price, on the book’s scale (Kalshi: the YES price)' }),
    size: Decimal.meta({ description: 'The size traded (positive)' }),
    side: TradeSide,
    received_ts: receivedTs,
    venue_side: z.string().optional().meta({
      description: 'With fields=venue_side only: the venue’s own side field as sent (yes, no, BUY, sell, …), or empty',
    }),
    sequence: z.number().int().min(0).optional().meta({
      description:
        'With fields=sequence only: the ticker’s counter shared with its deltas; (ts, sequence) orders trades and deltas as they arrived',
    }),
    venue_seq: venueSeq,
  })
  .meta({ id: 'TradeRow' });

/** A trade among the deltas (include=trades): a trade row without its optional trade fields, typed. */
export const TradeLine = z
  .object({
    type: z.literal('trade').meta({ description: 'A trade among the deltas (include=trades), not a delta' }),
    ts: TradeRow.shape.ts,
    trade_id: TradeRow.shape.trade_id,
    price: TradeRow.shape.price,
    size: TradeRow.shape.size,
    side: TradeSide,
    received_ts: receivedTs,
    venue_seq: venueSeq,
  })
  .meta({ id: 'TradeLine' });

/** One OHLCV bar: the trades of one interval (bars without trades are absent). */
export const Bar = z
  .object({
    ts: Timestamp.meta({ description: 'The bar’s start (a whole multiple of the interval since 1970, UTC)' }),
    open: Decimal.meta({ description: 'The price of the bar’s first trade, by (ts, sequence)' }),
    high: Decimal.meta({ description: 'The highest price traded' }),
    low: Decimal.meta({ description: 'The lowest price traded' }),
    close: Decimal.meta({ description: 'The price of the bar’s last trade, by (ts, sequence)' }),
    volume: Decimal.meta({ description: 'The sum of the trades’ sizes' }),
    vwap: Decimal.meta({
      description:
        'Σ price × size / volume, exact to 18 decimal places (rounded to the nearest 1e-18, halves away from zero)',
    }),
    trades: z.number().int().min(1).meta({ description: 'How many trades (each counted once)' }),
  })
  .meta({ id: 'Bar' });

export const Gap = z
  .object({
    from_ts: Timestamp.meta({ description: 'The last moment known complete' }),
    to_ts: Timestamp.meta({ description: 'The first moment complete again' }),
    reason: z.string().meta({
      description: 'Why (docs/history-internals.md, Recorder: Gaps)',
      examples: ['disconnect', 'stall', 'sequence_gap', 'recorder_start', 'seed_end'],
    }),
    detected_at: Timestamp.meta({ description: 'When the gap was recorded' }),
  })
  .meta({
    id: 'Gap',
    description: 'A stretch that was not recorded: from_ts is the last moment known complete, to_ts the first again.',
  });

/** A gap among the lines of a stream (`include=gaps`). */
export const GapLine = z
  .object({ type: z.literal('gap').meta({ description: 'A gap marker, not a row' }), ...Gap.shape })
  .meta({ id: 'GapLine' });

/** A gap of the trades among the deltas and trades interleaved (`include=gaps,trades`). */
export const TradesGapLine = z
  .object({
    type: z.literal('trades_gap').meta({ description: 'A gap of the trades (trades there may be missing), not a row' }),
    ...Gap.shape,
  })
  .meta({ id: 'TradesGapLine' });

/** The last line of an NDJSON stream. */
export const EndLine = z
  .object({
    type: z.literal('end').meta({ description: 'The last line: a stream without it was cut' }),
    count: z
      .number()
      .int()
      .min(0)
      .meta({ description: 'Rows in the stream (gap lines not counted; with include=trades, trades are rows)' }),
    next_cursor: z.string().nullable().meta({ description: 'Where the rest begins, when the stream stopped early' }),
  })
  .meta({ id: 'EndLine' });

const EXTENDED =
  'next_cursor (and gaps, with include=gaps) only when a parameter added after the spec is given: cursor, format, fields or include; next_cursor also on a page its limit cut whose body passed 1 MiB (its headers, and so its Link, went before its end).';

function rowsPage<R extends z.ZodType>(row: R, id: string, description = EXTENDED) {
  return z
    .object({
      exchange,
      ticker,
      rows: z.array(row),
      count: z.number().int().min(0),
      gaps: z.array(Gap).optional(),
      next_cursor: z.string().nullable().optional(),
    })
    .meta({ id, description });
}

/** A JSON page of snapshot rows (`count` follows `rows`: the body streams). */
export const SnapshotPage = rowsPage(SnapshotRow, 'SnapshotResponse');
/**
 * A JSON page of delta rows; with include=trades the ticker's trades among them (`{"type":"trade",…}`), and with
 * include=gaps,trades the trades' gaps in `trades_gaps`.
 */
export const DeltaPage = z
  .object({
    exchange,
    ticker,
    rows: z.array(z.xor([DeltaRow, TradeLine])),
    count: z.number().int().min(0).meta({ description: 'Rows (with include=trades, trades are rows)' }),
    gaps: z.array(Gap).optional(),
    trades_gaps: z.array(Gap).optional().meta({ description: 'With include=gaps,trades: the trades’ gaps' }),
    next_cursor: z.string().nullable().optional(),
  })
  .meta({ id: 'DeltaResponse', description: EXTENDED });
/** A JSON page of trades: always with next_cursor (and gaps — the trades' — with include=gaps). */
export const TradePage = rowsPage(
  TradeRow,
  'TradeResponse',
  'next_cursor always; gaps (the trades’ gaps: trades there may be missing) with include=gaps.',
);

/** A JSON page of bars. */
export const BarPage = z
  .object({
    exchange,
    ticker,
    interval: z.enum(Object.keys(BAR_INTERVALS) as [BarInterval, ...BarInterval[]]),
    rows: z.array(Bar).meta({ description: 'By ts; intervals without trades have no bar' }),
    count: z.number().int().min(0),
    next_cursor: z.string().nullable().meta({ description: 'Where the next page begins; null: the walk is complete' }),
  })
  .meta({ id: 'BarResponse' });

const LINES =
  'One %s per line, gap markers (with include=gaps) among them, and a last line {"type":"end","count":N,"next_cursor":null|string}.';

/**
 * A line of an NDJSON stream: a row, a gap marker, or the end line (which comes last, once). OpenAPI 3.1 has no
 * sequence media type: the schema of `application/x-ndjson` is that of each line.
 */
export const SnapshotLine = z.xor([SnapshotRow, DigestLine, GapLine, EndLine]).meta({
  description: `${LINES.replace('%s', 'SnapshotRow')} With format=digest, one DigestLine per book instead of its rows (the end line's count: books).`,
});
export const DeltaLine = z.xor([DeltaRow, TradeLine, GapLine, TradesGapLine, EndLine]).meta({
  description: `${LINES.replace('%s', 'DeltaRow')} With include=trades, trades {"type":"trade",…} among the rows in one (ts, sequence) order, and with include=gaps,trades the trades’ gaps {"type":"trades_gap",…}.`,
});
export const TradeLines = z
  .xor([TradeRow, GapLine, EndLine])
  .meta({ description: LINES.replace('%s', 'TradeRow').replace('gap markers', 'the trades’ gap markers') });

/** The CSV body, described in prose; its lines are the NDJSON lines in columns (csvColumns). */
export const CsvBody = z.string().meta({
  description:
    'A header line, one row per line in the header’s columns, gap markers #gap,from_ts,to_ts,reason,detected_at (with include=gaps) among them, and a last line #end,count,next_cursor (empty when complete). Deltas with include=trades: trade lines #trade,ts,trade_id,price,size,side[,received_ts][,venue_seq] among the rows, and #trades_gap lines with include=gaps. A trade id or venue side holding a comma or a quote is quoted (RFC 4180).',
});

/**
 * The Parquet body: a file of the rows with the NDJSON rows' fields and types, whose footer's key-value metadata
 * says what the NDJSON end line and gap markers say (docs/history.md, "Parquet").
 */
export const ParquetBody = z.string().meta({
  format: 'binary',
  description:
    'An Apache Parquet file: the rows, one column per field of the NDJSON row (timestamps TIMESTAMP(MILLIS, UTC), decimals DECIMAL(38,18), sequences UINT64, the rest strings), in row groups of 65,536 rows; its footer’s key-value metadata holds depthgate.count, depthgate.next_cursor (absent when complete), depthgate.gaps (with include=gaps: a JSON array of gaps), depthgate.exchange, depthgate.ticker, depthgate.endpoint.',
});

/** The columns of a CSV stream: the row's fields in wire order, the optional ones only when asked for. */
export function csvColumns(kind: 'snapshot' | 'delta' | 'trade', fields: boolean | readonly string[]): string[] {
  const shape = kind === 'delta' ? DeltaRow.shape : kind === 'trade' ? TradeRow.shape : SnapshotRow.shape;
  const asked = fields === true ? ['received_ts'] : fields === false ? [] : fields;
  const optional = ['received_ts', 'venue_side', 'venue_seq'].concat(kind === 'trade' ? ['sequence'] : []);
  return Object.keys(shape).filter((n) => !optional.includes(n) || asked.includes(n));
}

export const TickerList = z
  .object({
    exchange,
    count: z.number().int().min(0),
    tickers: z.array(z.string()).meta({ description: 'Sorted in byte (ASCII) order' }),
  })
  .meta({ id: 'TickerList' });

const kindCoverage = {
  rows: z.number().int().min(0).meta({ description: 'Rows inside the range' }),
  first_ts: Timestamp.nullable().meta({ description: 'The first ts inside the range; null: none' }),
  last_ts: Timestamp.nullable().meta({ description: 'The last ts inside the range; null: none' }),
};
/** Deltas inside a coverage range. */
export const KindCoverage = z.object(kindCoverage).meta({ id: 'KindCoverage' });
/** Snapshots inside a coverage range: also their number of distinct books. */
export const SnapshotCoverage = z
  .object({ ...kindCoverage, books: z.number().int().min(0).meta({ description: 'Snapshots only: distinct books' }) })
  .meta({ id: 'SnapshotCoverage' });

const METHODS =
  'rest_book (the venue’s REST book), checksum (a venue checksum that matched), snapshot (a venue snapshot equal to the book)';
const methodCount = z.number().int().min(0);
/** The verification points inside a coverage range (docs/history.md, "Verified books"). */
export const VerificationCoverage = z
  .object({
    count: z
      .number()
      .int()
      .min(0)
      .meta({ description: 'Verification points inside the range (each moment and method once)' }),
    first_ts: Timestamp.nullable().meta({ description: 'The first inside the range; null: none' }),
    last_ts: Timestamp.nullable().meta({
      description:
        'The last inside the range (the newest moment the recorded book was confirmed equal to the venue’s); null: none',
    }),
    methods: z
      .object({ rest_book: methodCount, checksum: methodCount, snapshot: methodCount })
      .meta({ description: `Points per method: ${METHODS}` }),
  })
  .meta({ id: 'VerificationCoverage' });

export const WINDOW_RULES = ['anonymous', 'max_data_age_days', 'full_history_prefix', 'full_history'] as const;

export const CallerWindow = z
  .object({
    start_ts: Timestamp,
    rule: z.enum(WINDOW_RULES),
    days: z.number().int().nullable().meta({ description: 'Days the rule allows; null: full history' }),
  })
  .meta({
    id: 'CallerWindow',
    description:
      'The caller’s window for this ticker and the rule that sets it, so that older data being absent can be explained: anonymous (the last day), max_data_age_days (the key’s limit), full_history_prefix (the key’s full_history_prefixes match the ticker), full_history (a key without a limit). Never before 2026-03-07.',
  });

export const Coverage = z
  .object({
    exchange,
    ticker,
    start_ts: Timestamp.meta({ description: 'The range the figures cover: start_ts clamped to the caller’s window' }),
    end_ts: Timestamp.nullable().meta({ description: 'The range’s end; null: up to the newest row' }),
    snapshots: SnapshotCoverage.meta({ description: 'Snapshot rows and books inside the range' }),
    deltas: KindCoverage.meta({ description: 'Delta rows inside the range' }),
    verifications: VerificationCoverage.meta({
      description: 'The moments the recorder confirmed its book equal to the venue’s, inside the range',
    }),
    gaps: z.array(Gap).meta({ description: 'Every gap overlapping the range, with its recorded bounds' }),
    window: CallerWindow,
  })
  .meta({ id: 'Coverage' });

export const Level = z.object({ price: Decimal, quantity: Decimal }).meta({ id: 'Level' });

const STATUS =
  'ok: the book; in_gap: at falls inside a recorded gap (gap), there is no book; no_data: nothing to start from in the caller’s window (no snapshot at or before at)';
const bookHead = {
  exchange,
  ticker,
  at: Timestamp.meta({ description: 'The moment asked for (now when none was)' }),
};

const VerificationMethod = z.enum(['rest_book', 'checksum', 'snapshot']).meta({ description: METHODS });
/** The verification points around a book's moment (docs/history.md, "Verified books"). */
export const Verified = z
  .object({
    before: Timestamp.nullable().meta({
      description:
        'The last moment at or before at (inside the caller’s window) the recorded book equalled the venue’s; null: none',
    }),
    before_method: VerificationMethod.nullable().meta({ description: 'How before was established; null with it' }),
    after: Timestamp.nullable().meta({ description: 'The first such moment after at; null: none (yet)' }),
    after_method: VerificationMethod.nullable().meta({ description: 'How after was established; null with it' }),
  })
  .meta({
    id: 'Verified',
    description:
      'Whether the book at this moment lies between two confirmations: the recorder compares its book with the venue’s own (a REST book, a checksum, a resubscription’s snapshot). With both set and no gap between them, the book at `at` was confirmed on both sides; a mismatch is recorded as a gap (reason divergence) from the last confirmation to its detection.',
  });

/** The book at a moment: `ok` with the book, or `in_gap` / `no_data` without one. */
export const Book = z
  .discriminatedUnion('status', [
    z.object({
      ...bookHead,
      status: z.literal('ok').meta({ description: STATUS }),
      snapshot_ts: Timestamp.nullable().meta({
        description: 'The snapshot the book started from; null when it restarted empty at the end of base_gap',
      }),
      last_delta: z
        .object({ ts: Timestamp, sequence: z.number().int().min(0) })
        .nullable()
        .meta({ description: 'The last delta applied; null: none since the snapshot' }),
      gap: z.null(),
      base_gap: Gap.nullable().meta({
        description: 'A gap closed by an empty book (no snapshot at its to_ts): the book restarted empty at its end',
      }),
      bids: z.array(Level).meta({ description: 'Best (highest) first; null unless ok' }),
      asks: z.array(Level).meta({ description: 'Best (lowest) first; null unless ok' }),
      verified: Verified,
    }),
    z.object({
      ...bookHead,
      status: z.literal('in_gap'),
      snapshot_ts: z.null(),
      last_delta: z.null(),
      gap: Gap.meta({ description: 'in_gap: the gap at falls in' }),
      base_gap: z.null(),
      bids: z.null(),
      asks: z.null(),
      verified: Verified,
    }),
    z.object({
      ...bookHead,
      status: z.literal('no_data'),
      snapshot_ts: z.null(),
      last_delta: z.null(),
      gap: z.null(),
      base_gap: z.null(),
      bids: z.null(),
      asks: z.null(),
      verified: Verified,
    }),
  ])
  .meta({ id: 'Book', description: `The book, or why there is none. ${STATUS}` });
