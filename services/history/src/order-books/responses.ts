/**
 * The body of a snapshots/deltas/trades or bars response, written as the reader hands over rows. The rows endpoints
 * answer in one of four formats (docs/history.md, "Responses", "Bulk streams" and "Parquet"):
 *
 *   json     {"exchange":"venue_b","ticker":"KX…","rows":[ …row, row… ],"count":N}
 *            (with a parameter added after the spec — cursor, fields, include, format — and on the trades endpoint
 *            always: also "gaps" when asked for, "trades_gaps" with include=gaps,trades, and "next_cursor" before
 *            the closing brace; without them "next_cursor" only on a page its limit cut after its first HOLD_BYTES,
 *            whose headers, and so its Link, went before its end)
 *   ndjson   one row object per line, gap markers {"type":"gap",…} (and {"type":"trades_gap",…}) among them, and a
 *            last line {"type":"end","count":N,"next_cursor":…}
 *   csv      a header line, one row per line, gap markers `#gap,…` (`#trades_gap,…`) among them, and a last line
 *            `#end,N,next_cursor`
 *   parquet  a Parquet file (parquet.ts) whose footer's key-value metadata says what the end line and the markers say
 *
 * and the bars endpoint in JSON, {"exchange":…,"ticker":…,"interval":"1m","rows":[ …bar, bar… ],"count":N,
 * "next_cursor":…} (docs/history.md, "Bars"). A Framing says what differs (headers, opening, end); RowsResponse is
 * the one writer of them all.
 *
 * `count` follows the rows so nothing has to be held back: the number is known only once the last row went out
 * (JSON objects are unordered; docs/history.md says so). The first HOLD_BYTES of the body are held back before the
 * headers go out, so a page that ends within them (every page of a few thousand rows) can carry `Link: <…>;
 * rel="next"` — whether the limit cut it is known only at its end — and any failure before that still gets a
 * proper error status. Longer answers start streaming without it (the body's next_cursor, or the end line, says
 * it). Whether the headers have gone is the response's own state (`res.headersSent`); nothing else records it.
 */
import type { ExchangeKey } from '@depthgate/auth';
import type { Response } from 'express';
import type { RowFormat } from '../contract/params';
import { gapJson, type Marker } from './gaps';
import type { DigestStream } from './digest';
import { PARQUET_CONTENT_TYPE, type ParquetStream } from './parquet';
import type { RowsSink } from './reader';
import { csvHeader, type SeriesKind } from './row-binary';
import { ONE_SHOT_MAX_BYTES } from '../gzip';

/** Body bytes held before the headers go out (so a short page can carry its Link header). */
const HOLD_BYTES = 1024 * 1024;

/** The caller took nothing of what waited to be sent for the write timeout: the response is cut. */
export class StalledReaderError extends Error {
  constructor(ms: number) {
    super(`the caller took nothing for ${ms} ms`);
    this.name = 'StalledReaderError';
  }
}

class AbortedError extends Error {
  constructor() {
    super('the request was aborted');
    this.name = 'AbortError';
  }
}

/** The opening of a JSON rows body, up to the first row. */
function rowsHead(exchange: ExchangeKey, ticker: string): string {
  return `{"exchange":${JSON.stringify(exchange)},"ticker":${JSON.stringify(ticker)},"rows":[`;
}

const CONTENT_TYPE: Record<RowFormat, string> = {
  json: 'application/json; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
  parquet: PARQUET_CONTENT_TYPE,
  digest: 'application/x-ndjson; charset=utf-8',
};

const FILE_NAME: Record<SeriesKind, string> = {
  snapshot: 'snapshots',
  delta: 'deltas',
  trade: 'trades',
  interleaved: 'deltas-trades',
};

/** How an answer's body is framed: what the writer (RowsResponse) cannot know of it. */
export interface Framing {
  /** Sets the answer's headers (Content-Type and those of its format) but Link, which is the writer's. */
  headers(res: Response): void;
  /** The body up to its first row. */
  opening: string;
  /**
   * The end of the body. `linked`: the headers are still held, so a cut page's Link goes with them; when they went
   * before the page ended (a page over HOLD_BYTES), the body is the only place left to say where the next page begins.
   */
  closing(ending: RowsEnding, linked: boolean): string | Buffer;
}

/** How an answer of rows is framed. */
export interface RowsFraming {
  format: RowFormat;
  kind: SeriesKind;
  exchange: ExchangeKey;
  ticker: string;
  /** The optional fields of the rows (FIELD_*): the CSV header's columns. */
  fields: number;
  /** JSON: the envelope of the extended answer (next_cursor, and gaps when asked for). */
  extended: boolean;
  includeGaps: boolean;
  /** Parquet: the file being written (its footer ends the answer). */
  parquet?: ParquetStream;
  /** Digest: the books' lines being written (the last one ends with the rows). */
  digest?: DigestStream;
}

/** How an answer ended. */
export interface RowsEnding {
  count: number;
  /** Where the next page begins, when the limit (or a drain) cut the answer. */
  nextCursor: string | null;
  /** The path and query of the next page (the Link header). */
  nextLink: string | null;
  /** With include=gaps: the gap markers this answer placed (JSON lists them; Parquet's footer too). */
  gaps: Marker[];
}

/** The framing of an answer of rows. */
export function rowsFraming(f: RowsFraming): Framing {
  return {
    headers: (res) => {
      res.setHeader('Content-Type', CONTENT_TYPE[f.format]);
      res.vary('Accept');
      if (f.format === 'csv' || f.format === 'parquet') {
        const name = `${f.exchange}-${f.ticker}-${FILE_NAME[f.kind]}.${f.format}`;
        res.setHeader('Content-Disposition', `inline; filename="${name}"`);
      }
    },
    opening: opening(f),
    closing: (e, linked) => closing(f, e, linked),
  };
}

/**
 * The framing of a page of bars: JSON only (no Vary: Accept), `next_cursor` always in the body (with Link too when
 * the page ends within the headers' hold).
 */
export function barsFraming(exchange: ExchangeKey, ticker: string, interval: string): Framing {
  return {
    headers: (res) => res.setHeader('Content-Type', CONTENT_TYPE.json),
    opening: `{"exchange":${JSON.stringify(exchange)},"ticker":${JSON.stringify(ticker)},"interval":"${interval}","rows":[`,
    closing: (e) =>
      `],"count":${e.count},"next_cursor":${e.nextCursor === null ? 'null' : JSON.stringify(e.nextCursor)}}`,
  };
}

function opening(f: RowsFraming): string {
  switch (f.format) {
    case 'json':
      return rowsHead(f.exchange, f.ticker);
    case 'ndjson':
      return '';
    case 'csv':
      return csvHeader(f.kind, f.fields);
    case 'parquet':
    case 'digest':
      return '';
  }
}

/**
 * The end of the body (Framing.closing): a JSON page whose headers went before its end (over HOLD_BYTES) carries
 * `next_cursor` even in the spec's form.
 */
function closing(f: RowsFraming, e: RowsEnding, linked: boolean): string | Buffer {
  const cursor = e.nextCursor === null ? 'null' : JSON.stringify(e.nextCursor);
  switch (f.format) {
    case 'json': {
      if (!f.extended)
        return linked || e.nextCursor === null
          ? `],"count":${e.count}}`
          : `],"count":${e.count},"next_cursor":${cursor}}`;
      const list = (markers: Marker[]) => `[${markers.map(gapJson).join(',')}]`;
      const gaps = f.includeGaps ? `,"gaps":${list(e.gaps.filter((g) => g.tradesGap !== true))}` : '';
      const tradesGaps =
        f.includeGaps && f.kind === 'interleaved'
          ? `,"trades_gaps":${list(e.gaps.filter((g) => g.tradesGap === true))}`
          : '';
      return `],"count":${e.count}${gaps}${tradesGaps},"next_cursor":${cursor}}`;
    }
    case 'parquet':
      return (f.parquet as ParquetStream).finish({
        'depthgate.exchange': f.exchange,
        'depthgate.ticker': f.ticker,
        'depthgate.endpoint': FILE_NAME[f.kind],
        'depthgate.count': String(e.count),
        ...(e.nextCursor === null ? {} : { 'depthgate.next_cursor': e.nextCursor }),
        ...(f.includeGaps ? { 'depthgate.gaps': `[${e.gaps.map(gapJson).join(',')}]` } : {}),
      });
    case 'ndjson':
      return `{"type":"end","count":${e.count},"next_cursor":${cursor}}\n`;
    case 'digest': {
      // The end line counts books (one line each), not the rows they were summed from.
      const digest = f.digest as DigestStream;
      const last = digest.finish();
      return `${last}{"type":"end","count":${digest.books},"next_cursor":${cursor}}\n`;
    }
    case 'csv':
      return `#end,${e.count},${e.nextCursor ?? ''}\n`;
  }
}

export class RowsResponse implements RowsSink {
  private held: Buffer[] | undefined = [];
  private heldBytes = 0;
  /** Called on the next 'drain'. One listener per response, never removed: the `compression` middleware forwards
   * `res.on('drain')` to its gzip stream but not `removeListener`, so a listener per wait would pile up there. */
  private onDrain: (() => void) | undefined;

  constructor(
    private readonly res: Response,
    /** The request's abort signal: a wait for 'drain' ends with it. */
    private readonly signal: AbortSignal,
    /** A wait for 'drain' longer than this fails (StalledReaderError): the caller stopped reading. */
    private readonly writeTimeoutMs: number,
    private readonly framing: Framing,
  ) {}

  /**
   * Sends rendered rows (one write each: no cork(), since a corked ServerResponse reports no back-pressure below its
   * 64 KiB high-water mark whatever the socket holds, and a paused client would make us buffer the whole answer);
   * resolves once the socket can take more: true when a 'drain' said everything written so far has left our buffers
   * (so `text` is free again), false when that is not known. The first HOLD_BYTES are held (see above).
   */
  async write(text: Buffer): Promise<boolean> {
    if (this.held) {
      this.held.push(text);
      this.heldBytes += text.length;
      if (this.heldBytes < HOLD_BYTES) return false;
      // What was held goes out as it is, a write per piece: free once a 'drain' said so.
      if (this.commit(null)) return false;
      await this.drained();
      return true;
    }
    if (this.res.write(text)) return false;
    // 'drain': the socket (or the gzip stream) took everything written so far.
    await this.drained();
    return true;
  }

  /** Closes the body: the end of the array and object, or the end line. */
  finish(ending: RowsEnding): void {
    // Held to the end: the whole answer goes out with its length (in one piece when gzip.ts can compress it in one call).
    if (this.held) this.commit(ending.nextLink, this.framing.closing(ending, true));
    else this.res.end(this.framing.closing(ending, false));
  }

  /**
   * Sends the headers (with Link when `link`), the opening and what was held — and, given `last`, the end of the body
   * with them; false when the socket is full.
   */
  private commit(link: string | null, last?: string | Buffer): boolean {
    const held = this.held ?? [];
    this.held = undefined;
    const res = this.res;
    res.status(200);
    this.framing.headers(res);
    if (link !== null) res.setHeader('Link', `<${link}>; rel="next"`);
    const head = Buffer.from(this.framing.opening, 'latin1');
    const pieces = head.length > 0 ? [head, ...held] : held;
    if (last !== undefined) {
      const tail = typeof last === 'string' ? Buffer.from(last, 'utf8') : last;
      const bytes = head.length + this.heldBytes + tail.length;
      // With the body's length (which `compression` drops if it compresses, and gzip.ts replaces if it does): its end
      // alone would not set it, since `compression` sends the headers before it. Small enough to be gzipped in one
      // call (gzip.ts): one piece. Larger: the pieces as they are, not copied into one (a 10,000-row page is a
      // megabyte).
      res.setHeader('Content-Length', bytes);
      if (bytes <= ONE_SHOT_MAX_BYTES) res.end(Buffer.concat([...pieces, tail]));
      else {
        for (const piece of pieces) res.write(piece);
        res.end(tail);
      }
      return true;
    }
    res.on('drain', () => {
      const waiter = this.onDrain;
      this.onDrain = undefined;
      waiter?.();
    });
    let room = true;
    for (const piece of pieces) room = res.write(piece);
    return room;
  }

  private drained(): Promise<void> {
    const signal = this.signal;
    if (signal.aborted) return Promise.reject(new AbortedError());
    return new Promise((resolve, reject) => {
      const settle = (error?: Error) => {
        this.onDrain = undefined;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (error) reject(error);
        else resolve();
      };
      const onAbort = () => settle(new AbortedError());
      const timer = setTimeout(() => settle(new StalledReaderError(this.writeTimeoutMs)), this.writeTimeoutMs);
      this.onDrain = () => settle();
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
