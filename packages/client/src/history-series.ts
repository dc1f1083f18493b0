/**
 * A range's rows, in batches: the NDJSON stream of the range read as it arrives, following its `next_cursor` when it
 * stops early; against a service that answers JSON only, pages, following `next_cursor` where the page has one and
 * `start_ts` otherwise (snapshots by whole books, deltas skipping the `sequence` values already seen at the last
 * `ts`). Bars come in JSON pages, following `next_cursor`. Rows are checked as they are parsed; a cut stream is a
 * `stream_cut` error, never a short result.
 */
import { DataError, type DataLocation } from './errors.js';
import type { Answer, Transport } from './http.js';
import {
  ENDPOINTS,
  assertCount,
  assertInterval,
  assertMoment,
  checkPage,
  historyPath,
  includeOf,
  iso,
} from './history-requests.js';
import type { RangeOptions } from './history-types.js';
import { splitLines } from './lines.js';
import {
  lastParsedTs,
  parseLineAt,
  type BarInterval,
  type DeltaRow,
  type EndLine,
  type Gap,
  type GapMarker,
  type LineKind,
  type RowKind,
  type RowOf,
  type StreamLine,
  type TradeLine,
  type TradesGapMarker,
} from './rows.js';
import { parseTimestamp } from './timestamps.js';

/** Items of a stream as they arrived; from NDJSON, with each item's `ts` in epoch ms (read once, by the parser). */
export type Batch<T> = T[] & { ms?: number[] };

/** What a range of a kind holds: its rows, and (asked for) markers and trade lines; bars hold bars only. */
export type SeriesItem<K extends RowKind> = K extends LineKind ? Exclude<StreamLine<K>, EndLine> : RowOf<K>;

/** The moment an item stands at (a gap marker's: its start), in epoch ms. */
export function itemMs(item: { ts: string } | Gap): number {
  return parseTimestamp('from_ts' in item ? item.from_ts : item.ts);
}

const DEFAULT_PAGE = 100_000;

/**
 * A range's rows (and gap markers) in batches — one per received chunk of a stream, or per page — so that readers
 * iterate arrays and await once per batch, not once per row.
 */
export async function* series<K extends RowKind>(
  http: Transport,
  kind: K,
  exchange: string,
  ticker: string,
  options: Omit<RangeOptions, 'fields'> & {
    fields?: readonly string[];
    gaps?: boolean;
    trades?: boolean;
    interval?: BarInterval;
    /** @internal Rows a reader takes in place from a stream (see `readNdjson`). */
    take?: LineTaker;
  },
): AsyncGenerator<Batch<SeriesItem<K>>> {
  assertCount(options.pageSize, 'pageSize');
  let start = assertMoment(options.start, 'start', 'ceil');
  const end = assertMoment(options.end, 'end');
  const interval = kind === 'bar' ? assertInterval(options.interval) : undefined;
  const path = historyPath(exchange, ENDPOINTS[kind], ticker);
  // Bars come in JSON pages only.
  let stream = kind !== 'bar' && (options.transport ?? 'stream') === 'stream';
  let cursor: string | undefined;
  /** Paging by start_ts: the deltas already given at the last ts. */
  let seen: { ts: string; sequence: number } | undefined;
  const pageLimit = options.pageSize ?? DEFAULT_PAGE;
  // The next request's limit: a stream has none (the whole range, with a cursor if the service stops early).
  let limit = stream && options.pageSize === undefined ? undefined : pageLimit;
  for (;;) {
    const url = http.url(path, {
      interval,
      // A cursor carries the range it walks (the service refuses both).
      start_ts: cursor === undefined ? iso(start) : undefined,
      end_ts: cursor === undefined ? iso(end) : undefined,
      limit,
      cursor,
      fields: options.fields?.length ? options.fields.join(',') : undefined,
      include: includeOf(options),
      // JSON asked for by name: a service with cursors then gives every page its next_cursor (the spec's form
      // carries it in the `Link` header only, for a page its limit cut within its first 1 MiB). Bars have no format:
      // JSON only, next_cursor always.
      format: stream ? 'ndjson' : kind === 'bar' ? undefined : 'json',
    });
    const answer = await http.request(url, {
      signal: options.signal,
      headers: { Accept: stream ? 'application/x-ndjson' : 'application/json' },
    });
    const type = answer.response.headers.get('content-type') ?? '';
    if (kind !== 'bar' && /^application\/(x-)?ndjson/i.test(type)) {
      const next = yield* readNdjson(kind as LineKind, answer, options.take) as AsyncGenerator<
        Batch<SeriesItem<K>>,
        string | null
      >;
      if (next === null) return;
      cursor = next;
      continue;
    }
    if (!/^application\/json/i.test(type)) {
      answer.cancel();
      throw new DataError('malformed_body', `a rows answer of type ${JSON.stringify(type)}`, {
        url: answer.url,
        requestId: answer.requestId,
      });
    }
    // A service without streams answers a page (of its default size when no limit was asked): its rows are taken,
    // and the range goes on in pages.
    stream = false;
    const page = checkPage(kind, answer, await answer.text());
    const rows = page.rows as (RowOf<K> | TradeLine)[];
    // A page's gap markers (the trades' gaps too, among deltas and trades) go among its rows as a stream places them:
    // after every row with ts ≤ the gap's start.
    const markers: (GapMarker | TradesGapMarker)[] = [];
    if (options.gaps) {
      for (const g of (page as { gaps?: Gap[] }).gaps ?? []) markers.push({ ...g, type: 'gap' });
      for (const g of (page as { trades_gaps?: Gap[] }).trades_gaps ?? []) markers.push({ ...g, type: 'trades_gap' });
      markers.sort((a, b) => parseTimestamp(a.from_ts) - parseTimestamp(b.from_ts));
    }
    const batch: unknown[] = [];
    let m = 0;
    for (const row of rows) {
      const ts = parseTimestamp(row.ts);
      while (m < markers.length && parseTimestamp((markers[m] as Gap).from_ts) < ts) batch.push(markers[m++]);
      if (kind === 'delta' && seen && row.ts === seen.ts && (row as DeltaRow).sequence <= seen.sequence) continue;
      batch.push(row);
    }
    while (m < markers.length) batch.push(markers[m++]);
    if (batch.length) yield batch as Batch<SeriesItem<K>>;
    if (page.next_cursor !== undefined) {
      // A service with cursors says where to go on (null: nothing left).
      if (page.next_cursor === null) return;
      cursor = page.next_cursor;
      limit = pageLimit;
      continue;
    }
    // The spec's paging: a page shorter than asked for is the last (of a size not asked for: an empty one).
    if (rows.length < (limit ?? 1)) return;
    // Only the spec's two endpoints page without cursors; every later one always answers next_cursor.
    if ((kind !== 'snapshot' && kind !== 'delta') || options.trades) {
      throw new DataError('malformed_body', `a full page of ${ENDPOINTS[kind]} without "next_cursor"`, {
        url: answer.url,
        requestId: answer.requestId,
      });
    }
    const last = rows[rows.length - 1] as RowOf<K>;
    if (kind === 'snapshot') {
      // Pages never cut a book: the next one starts after the last book's ts.
      start = parseTimestamp(last.ts) + 1;
      limit = pageLimit;
      continue;
    }
    // The next page starts at the last ts (start_ts is inclusive, to the millisecond), so it holds again every row of
    // that ts given so far — all of them are in this page, which began at or before it: it asks for those and a page
    // more (at least as many again, so that a ts with more rows than a page takes a few requests, not one per page),
    // each requested once.
    const run = rows.filter((r) => r.ts === last.ts).length;
    limit = run + Math.max(pageLimit, run);
    const lastDelta = last as DeltaRow;
    seen = { ts: lastDelta.ts, sequence: lastDelta.sequence };
    start = parseTimestamp(lastDelta.ts);
  }
}

/**
 * @internal A reader of rows in place: given each line of a stream (`text[from, to)`), true when it took the line as a
 * row (counted, not parsed here), false to leave it to the parser.
 */
export type LineTaker = (text: string, from: number, to: number, where: DataLocation) => boolean;

/**
 * Reads one NDJSON answer, a batch per chunk (with `take`, also the chunks whose every line it took); returns its end
 * line's `next_cursor` (null: the range is done). The end line counts rows: trade lines among deltas are rows, gap
 * markers are not.
 */
async function* readNdjson<K extends LineKind>(
  kind: K,
  answer: Answer,
  take?: LineTaker,
): AsyncGenerator<Batch<Exclude<StreamLine<K>, EndLine>>, string | null> {
  const source = splitLines(answer.chunks(), { url: answer.url, requestId: answer.requestId });
  const where = { url: answer.url, requestId: answer.requestId, line: 0 };
  let end: EndLine | undefined;
  let count = 0;
  for await (const { text, bounds } of source.batches) {
    const batch: Batch<Exclude<StreamLine<K>, EndLine>> = [];
    const ms: number[] = [];
    batch.ms = ms;
    for (let i = 0; i < bounds.length; i += 2) {
      const from = bounds[i] as number;
      const to = bounds[i + 1] as number;
      where.line++;
      if (end !== undefined) {
        throw new DataError('malformed_body', 'a line after the end line', { ...where, text: text.slice(from, to) });
      }
      if (from === to) continue;
      if (take?.(text, from, to, where)) {
        count++;
        continue;
      }
      const item = parseLineAt(kind, text, from, to, where);
      if ('type' in item) {
        if (item.type === 'end') {
          end = item;
          continue;
        }
        if (item.type === 'trade') count++;
        batch.push(item as Exclude<StreamLine<K>, EndLine>);
        ms.push(lastParsedTs());
        continue;
      }
      count++;
      batch.push(item as Exclude<StreamLine<K>, EndLine>);
      ms.push(lastParsedTs());
    }
    if (batch.length || take) yield batch;
  }
  checkEnd(end, count, source.complete(), where);
  return end.next_cursor;
}

/**
 * @internal A stream that ended: it had its end line (else it was cut: `complete` says whether inside a line), and the
 * end line counts the `count` items (`what`) it had.
 */
export function checkEnd<E extends { count: number }>(
  end: E | undefined,
  count: number,
  complete: boolean,
  where: DataLocation,
  what = 'rows',
): asserts end is E {
  if (end === undefined) {
    throw new DataError(
      'stream_cut',
      complete ? 'the stream ended without its end line' : 'the stream ended inside a line',
      { ...where },
    );
  }
  if (end.count !== count) {
    throw new DataError('stream_cut', `the end line counts ${end.count} ${what}, the stream had ${count}`, {
      ...where,
    });
  }
}

/** One item at a time from batches (the public iterators). */
export async function* flatten<T>(batches: AsyncIterable<T[]>): AsyncGenerator<T> {
  for await (const batch of batches) yield* batch;
}
