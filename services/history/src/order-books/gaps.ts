/**
 * A stored gap as the answers write it: a JSON object (the JSON envelope's "gaps", the book's "gap" and "base_gap") and
 * a marker line among the rows of a line format (placed by the reader's renderer).
 */
import type { StoredGap } from '@depthgate/history-store';
import { timestampText } from './row-binary';

/**
 * A gap placed among the rows of an answer. In the deltas stream with include=trades the trades' gaps are markers of
 * their own kind (`tradesGap`): `{"type":"trades_gap",…}`, `#trades_gap,…`, the JSON `trades_gaps` array.
 */
export type Marker = StoredGap & { tradesGap?: boolean };

/** A gap as every answer shows it. */
export function gapJson(g: StoredGap): string {
  return `{"from_ts":"${timestampText(g.fromTs)}","to_ts":"${timestampText(g.toTs)}","reason":${JSON.stringify(g.reason)},"detected_at":"${timestampText(g.detectedAt)}"}`;
}

/**
 * A gap marker as a line of a line format: NDJSON `{"type":"gap",…}`, CSV `#gap,from_ts,to_ts,reason,detected_at`
 * (a trades gap among deltas: `trades_gap`).
 */
export function gapLine(format: 'ndjson' | 'csv', g: Marker): Buffer {
  const type = g.tradesGap === true ? 'trades_gap' : 'gap';
  const text =
    format === 'ndjson'
      ? `{"type":"${type}",${gapJson(g).slice(1)}\n`
      : `#${type},${timestampText(g.fromTs)},${timestampText(g.toTs)},${g.reason},${timestampText(g.detectedAt)}\n`;
  return Buffer.from(text, 'latin1');
}

/** Markers of two streams (each by from_ts) in one order by from_ts, book gaps first at equal from_ts. */
export function mergeMarkers(book: readonly StoredGap[], trades: readonly StoredGap[]): Marker[] {
  const out: Marker[] = [];
  let i = 0;
  let j = 0;
  while (i < book.length || j < trades.length) {
    const b = book[i];
    const t = trades[j];
    if (t === undefined || (b !== undefined && b.fromTs <= t.fromTs)) {
      out.push(b as StoredGap);
      i++;
    } else {
      out.push({ ...t, tradesGap: true });
      j++;
    }
  }
  return out;
}
