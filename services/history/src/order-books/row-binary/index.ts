/**
 * Turns ClickHouse's `RowBinary` output of a window query into the rows of the answer: the members of the response's
 * JSON array, NDJSON lines or CSV lines (docs/history.md, "Bulk streams"), with `received_ts` and `venue_seq` when asked for — or
 * hands each row to a columnar sink (Parquet, parquet.ts).
 *
 * Why here and not in ClickHouse: rendering a row's JSON text in SQL (`concat`, `formatDateTime`, a decimal trim)
 * cost ClickHouse 18.16 about 2 ms of its CPU per 1,000-row answer — half of everything it did for the request —
 * while the raw columns in `RowBinary` cost it the least of every output format. ClickHouse is the shared, stateful
 * part of the system and the service is the part that scales out, so the text is made here, by straight-line code
 * over the bytes (no per-row objects, no strings): measured in docs/benchmarks.md.
 *
 * - text.ts: the text primitives, the canonical text of one value (decimal, timestamp, sequence) from its bytes;
 * - layouts.ts: the RowBinary layouts of the window queries, and one render function per row shape;
 * - renderer.ts: `RowRenderer`, chunks of RowBinary to rows of text: it guards the stream against ClickHouse's
 *   exception text, holds rows back for the never-cut-a-book rule, keeps the last row's key, places gap markers;
 * - row-chunks.ts: the raw rows of one query, held as they arrived.
 */
export {
  csvHeader,
  cutAtBook,
  FIELD_RECEIVED,
  FIELD_SEQUENCE,
  FIELD_VENUE_SEQ,
  FIELD_VENUE_SIDE,
  layoutOf,
  rowBinarySize,
  rowKey,
  SIDE_BID,
  VENUE_SEQ_BYTES,
  type Layout,
  type RowKey,
  type SeriesKind,
  type TextFormat,
} from './layouts';
export { CorruptStreamError, RowRenderer, type ColumnarSink, type RenderOptions } from './renderer';
export { RowChunks } from './row-chunks';
export { bytes, copy, decimalText, int128, readTs, timestampText, writeDecimal18, writeTimestamp } from './text';
