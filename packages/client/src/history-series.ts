/**
 * A range's rows, in batches: the NDJSON stream of the range read as it arrives, following its `next_cursor` when it
 * stops early; against a service that answers JSON only, pages, following `next_cursor` where the page has one and
 * `start_ts` otherwise (snapshots by whole books, deltas skipping the `sequence` values already seen at the last
 * `ts`). Rows are checked as they are parsed; a cut stream is a `stream_cut` error, never a short result.
 */
import { DataError, InvalidArgumentError } from './errors.js';
import type { Answer, Transport } from './http.js';
import { assertMoment, checkPage, historyPath, iso } from './history-requests.js';
import type { RangeOptions } from './history-types.js';
import { splitLines } from './lines.js';
import {
  lastParsedTs,
  parseLineAt,
  type DeltaRow,
  type EndLine,
  type Gap,
  type GapMarker,
  type RowKind,
  type RowOf,
} from './rows.js';
import { parseTimestamp } from './timestamps.js';

/** Items of a stream as they arrived; from NDJSON, with each item's `ts` in epoch ms (read once, by the parser). */
export type Batch<T> = T[] & { ms?: number[] };

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
  options: RangeOptions & { gaps?: boolean },
): AsyncGenerator<Batch<RowOf<K> | GapMarker>> {
  if (options.pageSize !== undefined && !(Number.isInteger(options.pageSize) && options.pageSize > 0)) {
    throw new InvalidArgumentError('pageSize must be a positive integer');
  }
  let start = assertMoment(options.start, 'start');
  const end = assertMoment(options.end, 'end');
  const path = historyPath(exchange, kind === 'delta' ? 'deltas' : 'snapshots', ticker);
  let stream = (options.transport ?? 'stream') === 'stream';
  let cursor: string | undefined;
  /** Paging by start_ts: the deltas already given at the last ts. */
  let seen: { ts: string; sequence: number } | undefined;
  // A stream has no default limit (the whole range, with a cursor if the service stops early); pages do.
  let pageLimit = options.pageSize ?? DEFAULT_PAGE;
  for (;;) {
    const url = http.url(path, {
      // A cursor carries the range it walks (the service refuses both).
      start_ts: cursor === undefined ? iso(start) : undefined,
      end_ts: cursor === undefined ? iso(end) : undefined,
      limit: stream && options.pageSize === undefined ? undefined : pageLimit,
      cursor,
      fields: options.fields?.length ? options.fields.join(',') : undefined,
      include: options.gaps ? 'gaps' : undefined,
      format: stream ? 'ndjson' : undefined,
    });
    const answer = await http.request(url, {
      signal: options.signal,
      headers: { Accept: stream ? 'application/x-ndjson' : 'application/json' },
    });
    const type = answer.response.headers.get('content-type') ?? '';
    if (/^application\/(x-)?ndjson/i.test(type)) {
      const next = yield* readNdjson(kind, answer);
      if (next === null) return;
      cursor = next;
      continue;
    }
    if (stream && /^application\/json/i.test(type) && options.pageSize === undefined) {
      // A service without streams answered a page of its default size: ask again, in pages of a known size.
      answer.cancel();
      stream = false;
      continue;
    }
    if (!/^application\/json/i.test(type)) {
      answer.cancel();
      throw new DataError('malformed_body', `a rows answer of type ${JSON.stringify(type)}`, {
        url: answer.url,
        requestId: answer.requestId,
      });
    }
    const page = checkPage(kind, answer, await answer.text());
    const rows = page.rows as RowOf<K>[];
    const gaps = options.gaps ? [...(page.gaps ?? [])] : [];
    const batch: (RowOf<K> | GapMarker)[] = [];
    let given = 0;
    for (const row of rows) {
      while (gaps.length && parseTimestamp((gaps[0] as Gap).from_ts) < parseTimestamp(row.ts)) {
        batch.push({ ...(gaps.shift() as Gap), type: 'gap' });
      }
      if (kind === 'delta' && seen && row.ts === seen.ts && (row as DeltaRow).sequence <= seen.sequence) continue;
      given++;
      batch.push(row);
    }
    for (const g of gaps) batch.push({ ...g, type: 'gap' });
    if (batch.length) yield batch;
    if (page.next_cursor !== undefined) {
      // A service with cursors says where to go on (null: nothing left).
      if (page.next_cursor === null) return;
      cursor = page.next_cursor;
      continue;
    }
    // The spec's paging: a page shorter than asked for is the last.
    if (rows.length < pageLimit) return;
    const last = rows[rows.length - 1] as RowOf<K>;
    if (kind === 'snapshot') {
      // Pages never cut a book: the next one starts after the last book's ts.
      start = parseTimestamp(last.ts) + 1;
      continue;
    }
    const lastDelta = last as DeltaRow;
    if (given === 0) {
      // Every row of the page shares the ts we started at and was given already: ask for more at once.
      pageLimit *= 2;
    }
    seen = { ts: lastDelta.ts, sequence: lastDelta.sequence };
    start = parseTimestamp(lastDelta.ts);
  }
}

/** Reads one NDJSON answer, a batch per chunk; returns its end line's `next_cursor` (null: the range is done). */
async function* readNdjson<K extends RowKind>(
  kind: K,
  answer: Answer,
): AsyncGenerator<Batch<RowOf<K> | GapMarker>, string | null> {
  const source = splitLines(answer.chunks(), { url: answer.url, requestId: answer.requestId });
  const where = { url: answer.url, requestId: answer.requestId, line: 0 };
  let end: EndLine | undefined;
  let count = 0;
  for await (const { text, bounds } of source.batches) {
    const batch: Batch<RowOf<K> | GapMarker> = [];
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
      const item = parseLineAt(kind, text, from, to, where);
      if ('type' in item) {
        if (item.type === 'end') end = item;
        else {
          batch.push(item);
          ms.push(lastParsedTs());
        }
        continue;
      }
      count++;
      batch.push(item);
      ms.push(lastParsedTs());
    }
    if (batch.length) yield batch;
  }
  if (end === undefined) {
    throw new DataError(
      'stream_cut',
      source.complete() ? 'the stream ended without its end line' : 'the stream ended inside a line',
      { ...where },
    );
  }
  if (end.count !== count) {
    throw new DataError('stream_cut', `the end line counts ${end.count} rows, the stream had ${count}`, { ...where });
  }
  return end.next_cursor;
}

/** One item at a time from batches (the public iterators). */
export async function* flatten<T>(batches: AsyncIterable<T[]>): AsyncGenerator<T> {
  for await (const batch of batches) yield* batch;
}
