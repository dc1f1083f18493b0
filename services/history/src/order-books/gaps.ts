/**
 * A stored gap as the answers write it: a JSON object (the JSON envelope's "gaps", the book's "gap" and "base_gap") and
 * a marker line among the rows of a line format (placed by the reader's renderer).
 */
import type { StoredGap } from '@depthgate/history-store';
import { timestampText } from './row-binary';

/** A gap as every answer shows it. */
export function gapJson(g: StoredGap): string {
  return `{"from_ts":"${timestampText(g.fromTs)}","to_ts":"${timestampText(g.toTs)}","reason":${JSON.stringify(g.reason)},"detected_at":"${timestampText(g.detectedAt)}"}`;
}

/** A gap marker as a line of a line format: NDJSON `{"type":"gap",…}`, CSV `#gap,from_ts,to_ts,reason,detected_at`. */
export function gapLine(format: 'ndjson' | 'csv', g: StoredGap): Buffer {
  const text =
    format === 'ndjson'
      ? `{"type":"gap",${gapJson(g).slice(1)}\n`
      : `#gap,${timestampText(g.fromTs)},${timestampText(g.toTs)},${g.reason},${timestampText(g.detectedAt)}\n`;
  return Buffer.from(text, 'latin1');
}
