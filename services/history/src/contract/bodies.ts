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

const receivedTs = Timestamp.optional().meta({
  description:
    'With fields=received_ts only: when the recorder received it (rows recorded before receive times were kept: ts)',
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
  })
  .meta({ id: 'SnapshotRow' });

/** One level change: add `quantity_delta` at (`side`, `price`). */
export const DeltaRow = z
  .object({
    ts,
    sequence: z.number().int().min(0).meta({ description: 'Orders the deltas of a ticker that share a ts' }),
    side: Side,
    price,
    quantity_delta: Decimal.meta({ description: 'To add to the quantity at (side, price); a level at 0 is gone' }),
    received_ts: receivedTs,
  })
  .meta({ id: 'DeltaRow' });

export const Gap = z
  .object({
    from_ts: Timestamp.meta({ description: 'The last moment known complete' }),
    to_ts: Timestamp.meta({ description: 'The first moment complete again' }),
    reason: z.string().meta({
      description: 'Why (docs/history.md, Recorder: Gaps)',
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

/** The last line of an NDJSON stream. */
export const EndLine = z
  .object({
    type: z.literal('end').meta({ description: 'The last line: a stream without it was cut' }),
    count: z.number().int().min(0).meta({ description: 'Rows in the stream (gap lines not counted)' }),
    next_cursor: z.string().nullable().meta({ description: 'Where the rest begins, when the stream stopped early' }),
  })
  .meta({ id: 'EndLine' });

const EXTENDED =
  'next_cursor (and gaps, with include=gaps) only when a parameter added after the spec is given: cursor, format, fields or include.';

function rowsPage<R extends z.ZodType>(row: R, id: string) {
  return z
    .object({
      exchange,
      ticker,
      rows: z.array(row),
      count: z.number().int().min(0),
      gaps: z.array(Gap).optional(),
      next_cursor: z.string().nullable().optional(),
    })
    .meta({ id, description: EXTENDED });
}

/** A JSON page of snapshot rows (`count` follows `rows`: the body streams). */
export const SnapshotPage = rowsPage(SnapshotRow, 'SnapshotResponse');
export const DeltaPage = rowsPage(DeltaRow, 'DeltaResponse');

const LINES =
  'One %s per line, gap markers (with include=gaps) among them, and a last line {"type":"end","count":N,"next_cursor":null|string}.';

/**
 * A line of an NDJSON stream: a row, a gap marker, or the end line (which comes last, once). OpenAPI 3.1 has no
 * sequence media type: the schema of `application/x-ndjson` is that of each line.
 */
export const SnapshotLine = z
  .xor([SnapshotRow, GapLine, EndLine])
  .meta({ description: LINES.replace('%s', 'SnapshotRow') });
export const DeltaLine = z.xor([DeltaRow, GapLine, EndLine]).meta({ description: LINES.replace('%s', 'DeltaRow') });

/** The CSV body, described in prose; its lines are the NDJSON lines in columns (csvColumns). */
export const CsvBody = z.string().meta({
  description:
    'A header line, one row per line in the header’s columns, gap markers #gap,from_ts,to_ts,reason,detected_at (with include=gaps) among them, and a last line #end,count,next_cursor (empty when complete).',
});

/** The columns of a CSV stream: the row's fields in wire order, `received_ts` only when asked for. */
export function csvColumns(kind: 'snapshot' | 'delta', receivedTs: boolean): string[] {
  const names = Object.keys((kind === 'delta' ? DeltaRow : SnapshotRow).shape);
  return receivedTs ? names : names.filter((n) => n !== 'received_ts');
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
    }),
  ])
  .meta({ id: 'Book', description: `The book, or why there is none. ${STATUS}` });
