/**
 * The history endpoints, the spec's three and what backtesters need beside them:
 *
 *   GET /api/{exchange}/tickers?prefix=
 *   GET /api/{exchange}/snapshots/{ticker}?start_ts&end_ts&limit[&cursor&format&fields&include]
 *   GET /api/{exchange}/deltas/{ticker}?start_ts&end_ts&limit[&cursor&format&fields&include]   (include=trades: the
 *                                      ticker's trades interleaved by (ts, sequence))
 *   GET /api/{exchange}/trades/{ticker}?start_ts&end_ts&limit[&cursor&format&fields&include]
 *   GET /api/{exchange}/bars/{ticker}?interval&start_ts&end_ts&limit[&cursor]   (OHLCV, VWAP, trade count)
 *   GET /api/{exchange}/coverage/{ticker}?start_ts&end_ts   (also: the caller's window for the ticker, and why)
 *   GET /api/{exchange}/book/{ticker}?at&depth   (also: the verification points around at)
 *
 * The spec's three answer byte for byte as the spec's requests always did; what the added parameters change is in
 * docs/history.md ("API").
 *
 * Each reads as parse → authorise → read → pipe: parameters (params.ts), what the caller may see (access.ts), the
 * order-book reader (reader.ts), the response body (responses.ts). Every ClickHouse query of a request runs under
 * its QueryScope; a failure becomes an error answer, or a cut connection once the answer has started. Every decided
 * behaviour is listed in docs/history.md ("API"); the rules of the spec are cited where they apply.
 */
import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import {
  callerWindow,
  canSeeTicker,
  effectiveRange,
  unknownTicker,
  windowStart,
  type Caller,
  type ExchangeKey,
  type Exchanges,
  type RunningRequests,
} from '@depthgate/auth';
import {
  BAR_INTERVALS,
  TICKER_PATTERN,
  VERIFICATION_METHODS,
  classifyClickHouseError,
  type GapStream,
  type HistoryStore,
  type QueryScope,
  type RowKind,
  type VerifiedAround,
} from '@depthgate/history-store';
import { AppError, type Logger } from '@depthgate/service-kit';
import { cursorParam, exchangeReader, prefixParam, readParam } from '../contract/params';
import type { Endpoint, HistoryMetrics } from '../metrics';
import { levels } from './book';
import type { CursorCodec, Position } from './cursor';
import { gapJson, mergeMarkers, type Marker } from './gaps';
import { DigestStream } from './digest';
import { ParquetStream } from './parquet';
import {
  parseAt,
  parseDepth,
  parseFields,
  parseFormat,
  parseInclude,
  parseInterval,
  parseLimit,
  parseStreamLimit,
  parseTimeRange,
  parseTradeFields,
} from './params';
import type { BookRead, CatalogueEntry, OrderBookReader, ReadResult } from './reader';
import { barsFraming, RowsResponse, rowsFraming, StalledReaderError } from './responses';
import {
  FIELD_RECEIVED,
  FIELD_SEQUENCE,
  FIELD_VENUE_SEQ,
  FIELD_VENUE_SIDE,
  timestampText,
  type SeriesKind,
} from './row-binary';

/** Most levels per side the book endpoint returns (`depth`). */
export const MAX_BOOK_DEPTH = 10_000;

export interface HistoryRoutesDeps {
  /** Makes each request's QueryScope. */
  store: HistoryStore;
  reader: OrderBookReader;
  metrics: HistoryMetrics;
  logger: Logger;
  queryTimeoutMs: number;
  /** A response whose caller takes nothing for this long is cut (WRITE_TIMEOUT_MS). */
  writeTimeoutMs: number;
  /** Bulk streams a caller may have running at once (STREAMS_MAX_CONCURRENT_*; 429 past them). */
  streams: RunningRequests;
  defaultLimit: number;
  maxLimit: number;
  now: () => number;
  cursors: CursorCodec;
  /** Rows per ClickHouse query of a bulk stream (each read whole into memory). */
  streamWindowRows: number;
  /** The service is draining: a bulk stream ends at its next window, with a cursor. */
  draining: () => boolean;
}

/**
 * `/:exchange` → the canonical exchange key (aliases and case accepted), else 404 unknown_exchange naming every
 * exchange with its aliases.
 */
export function resolveExchange(exchanges: Exchanges<ExchangeKey>): RequestHandler {
  const reader = exchangeReader(exchanges);
  return (req, res, next) => {
    const given = String(req.params.exchange ?? '');
    const exchange = reader.read(given);
    if (!exchange) {
      next(reader.unknown(given));
      return;
    }
    res.locals.exchange = exchange;
    next();
  };
}

export function historyRoutes(deps: HistoryRoutesDeps): Router {
  const router = express.Router({ mergeParams: true });

  /** Maps a failure to the answer: an AppError to send, or nothing when the connection must be cut. */
  function fail(err: unknown, req: Request, res: Response, scope: QueryScope, endpoint: Endpoint): AppError | null {
    if (err instanceof AppError) return err;
    if (err instanceof StalledReaderError) {
      deps.metrics.stalledReaders.inc({ endpoint });
      deps.logger.info({ req_id: req.id, err: { message: err.message } }, 'response cut: the caller stopped reading');
      return null;
    }
    if (scope.reason === 'cancelled') {
      deps.metrics.cancellations.inc({ endpoint });
      deps.logger.debug({ req_id: req.id }, 'caller went away: queries cancelled');
      return null;
    }
    if (scope.reason === 'timeout') {
      deps.metrics.timeouts.inc({ endpoint });
      return new AppError(
        'query_timeout',
        `The query ran over its time budget of ${deps.queryTimeoutMs} ms and was cancelled; narrow the time range or lower the limit`,
      );
    }
    const failure = classifyClickHouseError(err);
    if (failure.kind === 'timeout') deps.metrics.timeouts.inc({ endpoint });
    if (res.headersSent) {
      deps.metrics.cutStreams.inc({ endpoint });
      deps.logger.warn(
        { req_id: req.id, failure: failure.kind, code: failure.code, err: { message: failure.message.slice(0, 300) } },
        'ClickHouse failed mid-stream: response cut',
      );
      return null;
    }
    switch (failure.kind) {
      case 'timeout':
        return new AppError(
          'query_timeout',
          `The query ran over its time budget of ${deps.queryTimeoutMs} ms and was cancelled; narrow the time range or lower the limit`,
        );
      case 'unavailable':
      case 'cancelled':
        deps.logger.warn(
          {
            req_id: req.id,
            failure: failure.kind,
            code: failure.code,
            err: { message: failure.message.slice(0, 300) },
          },
          'ClickHouse unavailable',
        );
        return new AppError('service_unavailable', 'The history store is unavailable; retry shortly', {
          headers: { 'Retry-After': '5' },
        });
      case 'error':
        deps.logger.error(
          { req_id: req.id, code: failure.code, err: { message: failure.message.slice(0, 1000) } },
          'ClickHouse query failed',
        );
        return new AppError('internal_error', 'Internal server error');
    }
  }

  async function guarded(
    req: Request,
    res: Response,
    next: NextFunction,
    endpoint: Endpoint,
    body: (scope: QueryScope) => Promise<void>,
  ): Promise<void> {
    // Until the answer has started, the scope enforces the budget itself; a caller that goes away cancels it.
    const scope = deps.store.scope(deps.queryTimeoutMs, { answerStarted: () => res.headersSent });
    const onClose = () => {
      if (!res.writableFinished) scope.abort('cancelled');
    };
    res.once('close', onClose);
    try {
      await body(scope);
    } catch (err) {
      const answer = fail(err, req, res, scope, endpoint);
      // The request's other queries (a window read ahead, a partner of Promise.all, one still waiting at the gate)
      // end with it: killed, not left running for an answer nobody reads.
      scope.abort('cancelled');
      if (answer) next(answer);
      else if (!res.destroyed) res.destroy();
    } finally {
      scope.dispose();
      res.off('close', onClose);
    }
  }

  router.get('/tickers', (req, res, next) =>
    guarded(req, res, next, 'tickers', async (scope) => {
      const exchange = res.locals.exchange as ExchangeKey;
      const query = req.query as Record<string, unknown>;
      const prefix = readParam(query, prefixParam) ?? '';
      const caller = req.caller;
      let tickers: string[] = [];
      // A prefix outside the ticker grammar matches no ticker: the list is empty (and no query is needed).
      if (prefix === '' || TICKER_PATTERN.test(prefix)) {
        const allowedPrefixes = caller?.kind === 'key' ? caller.key.tickerPrefixes : null;
        const rows = await deps.reader.tickers(scope, exchange, { prefix, allowedPrefixes });
        const now = deps.now();
        // Listed: visible to the caller (rule 4) and with data inside the caller's window for that ticker.
        tickers = rows
          .filter((r) => canSeeTicker(caller, r.ticker) && r.lastTs >= windowStart(caller, r.ticker, now))
          .map((r) => r.ticker);
      }
      res.json({ exchange, count: tickers.length, tickers });
    }),
  );

  /** The ticker of the path as stored, if the caller may see it; else the answer of a ticker that does not exist. */
  async function visibleEntry(scope: QueryScope, req: Request, exchange: ExchangeKey): Promise<CatalogueEntry> {
    const requested = String(req.params.ticker ?? '');
    if (!TICKER_PATTERN.test(requested)) throw unknownTicker(exchange, requested);
    // A ticker outside the key's ticker_prefixes answers exactly like one that does not exist.
    const entry = await deps.reader.entry(scope, exchange, requested);
    if (!entry || !canSeeTicker(req.caller, entry.ticker)) throw unknownTicker(exchange, requested);
    return entry;
  }

  const rows =
    (kind: 'snapshot' | 'delta' | 'trade', endpoint: Endpoint): RequestHandler =>
    (req, res, next) =>
      guarded(req, res, next, endpoint, async (scope) => {
        // Parse: every parameter, before any query.
        const exchange = res.locals.exchange as ExchangeKey;
        const query = req.query as Record<string, unknown>;
        const cursorText = readParam(query, cursorParam);
        const range = parseTimeRange(query);
        if (cursorText !== undefined && (range.start !== undefined || range.end !== undefined)) {
          throw new AppError(
            'invalid_cursor',
            'a cursor carries the range it walks: give cursor without start_ts and end_ts',
          );
        }
        const { format, explicit } = parseFormat(query, req.headers.accept);
        const fieldNames: string[] = kind === 'trade' ? parseTradeFields(query) : parseFields(query);
        const include = parseInclude(query);
        if (include.trades && kind !== 'delta') {
          throw new AppError('invalid_include', `include=trades is for the deltas endpoint, not the ${endpoint}`);
        }
        if (include.trades && format === 'parquet') {
          throw new AppError(
            'invalid_include',
            'include=trades has no Parquet form: read the trades as Parquet beside the deltas (fields=sequence), and order the two by (ts, sequence)',
          );
        }
        if (format === 'digest' && (kind !== 'snapshot' || fieldNames.length > 0 || include.gaps)) {
          throw new AppError(
            'invalid_format',
            kind !== 'snapshot'
              ? `format=digest is for the snapshots endpoint (a book's digest), not the ${endpoint}`
              : 'format=digest gives one line per book: it takes neither fields nor include (read the gaps from coverage)',
          );
        }
        const series: SeriesKind = include.trades ? 'interleaved' : kind;
        const fields =
          (fieldNames.includes('received_ts') ? FIELD_RECEIVED : 0) |
          (fieldNames.includes('venue_side') ? FIELD_VENUE_SIDE : 0) |
          (fieldNames.includes('sequence') ? FIELD_SEQUENCE : 0) |
          (fieldNames.includes('venue_seq') ? FIELD_VENUE_SEQ : 0);
        const bulk = format !== 'json';
        const limit = bulk ? parseStreamLimit(query) : parseLimit(query, deps.defaultLimit, deps.maxLimit);
        // Authorise, and place the read inside the caller's window.
        const entry = await visibleEntry(scope, req, exchange);
        const caller: Caller | undefined = req.caller;
        const cursor =
          cursorText === undefined
            ? undefined
            : deps.cursors.decode(cursorText, { kind: series, exchange, ticker: entry.ticker, caller });
        const earliest = windowStart(caller, entry.ticker, deps.now());
        let start: Position = cursor?.position ?? { ts: range.start ?? earliest, sequence: 0n, skip: 0 };
        if (start.ts < earliest) start = { ts: earliest, sequence: 0n, skip: 0 };
        const to = cursor ? cursor.to : (range.end ?? null);
        // Gap markers: those overlapping the range; a page that continues a walk leaves out those its predecessors
        // placed (every marker at F went out with the first row after F, and the previous page ended at or after F
        // only if F is below its last row's ts). The trades endpoint's are the trades' gaps; the deltas' with
        // include=trades both streams'.
        const lastTs = cursor && (series === 'snapshot' ? cursor.position.ts - 1 : cursor.position.ts);
        const gapsOf = (stream: GapStream) =>
          deps.reader.gaps(scope, exchange, entry.ticker, {
            from: lastTs ?? start.ts,
            to,
            startingFrom: lastTs,
            stream,
          });
        let gaps: Marker[] | undefined;
        if (include.gaps) {
          if (to !== null && start.ts > to) gaps = [];
          else if (series === 'interleaved') {
            const [book, trades] = await Promise.all([gapsOf('book'), gapsOf('trades')]);
            gaps = mergeMarkers(book, trades);
          } else gaps = await gapsOf(series === 'trade' ? 'trades' : 'book');
        }
        const parquet = format === 'parquet' ? new ParquetStream(series, fields) : undefined;
        const digest = format === 'digest' ? new DigestStream() : undefined;
        // Read, and pipe to the response as the rows come.
        const read: BookRead = {
          kind: series,
          exchange,
          entry,
          start,
          to,
          limit,
          // (Parquet and the digests take the rows of the JSON layout.)
          format: format === 'parquet' || format === 'digest' ? 'json' : format,
          receivedTs: (fields & FIELD_RECEIVED) !== 0,
          venueSide: (fields & FIELD_VENUE_SIDE) !== 0,
          sequence: (fields & FIELD_SEQUENCE) !== 0,
          venueSeq: (fields & FIELD_VENUE_SEQ) !== 0,
          columnar: parquet ?? digest,
          gaps,
        };
        const out = new RowsResponse(
          res,
          scope.signal,
          deps.writeTimeoutMs,
          rowsFraming({
            format,
            kind: series,
            exchange,
            ticker: entry.ticker,
            fields,
            // The trades endpoint came after the spec: its JSON answers always carry next_cursor.
            extended:
              kind === 'trade' ||
              cursorText !== undefined ||
              explicit ||
              fieldNames.length > 0 ||
              query.include !== undefined,
            includeGaps: include.gaps,
            parquet,
            digest,
          }),
        );
        let result: ReadResult;
        if (bulk) {
          const release = await deps.streams.take(caller);
          try {
            result = await deps.reader.stream(scope, read, out, {
              windowRows: deps.streamWindowRows,
              stop: deps.draining,
            });
          } finally {
            release();
          }
        } else result = await deps.reader.read(scope, read, out);
        const nextCursor =
          result.next === null
            ? null
            : deps.cursors.encode({ kind: series, exchange, ticker: entry.ticker, position: result.next, to }, caller);
        out.finish({
          count: result.rows,
          nextCursor,
          nextLink: nextCursor === null ? null : nextLink(exchange, endpoint, entry.ticker, query, nextCursor),
          gaps: result.gaps,
        });
      });

  router.get('/snapshots/:ticker', rows('snapshot', 'snapshots'));
  router.get('/deltas/:ticker', rows('delta', 'deltas'));
  router.get('/trades/:ticker', rows('trade', 'trades'));

  router.get('/bars/:ticker', (req, res, next) =>
    guarded(req, res, next, 'bars', async (scope) => {
      const exchange = res.locals.exchange as ExchangeKey;
      const query = req.query as Record<string, unknown>;
      const cursorText = readParam(query, cursorParam);
      const range = parseTimeRange(query);
      if (cursorText !== undefined && (range.start !== undefined || range.end !== undefined)) {
        throw new AppError(
          'invalid_cursor',
          'a cursor carries the range it walks: give cursor without start_ts and end_ts',
        );
      }
      const interval = parseInterval(query);
      const intervalMs = BAR_INTERVALS[interval];
      const limit = parseLimit(query, deps.defaultLimit, deps.maxLimit);
      const entry = await visibleEntry(scope, req, exchange);
      const caller: Caller | undefined = req.caller;
      const cursor =
        cursorText === undefined
          ? undefined
          : deps.cursors.decode(cursorText, { kind: 'bar', exchange, ticker: entry.ticker, caller });
      if (cursor !== undefined && cursor.position.sequence !== BigInt(intervalMs)) {
        throw new AppError(
          'invalid_cursor',
          `cursor was issued for bars of another interval (${Number(cursor.position.sequence) / 60_000} min), not ${interval}`,
        );
      }
      // A bar is built from its whole interval: the range (and the caller's window) starts at a bar's start.
      const earliest = alignUp(windowStart(caller, entry.ticker, deps.now()), intervalMs);
      const from = Math.max(earliest, cursor?.position.ts ?? alignUp(range.start ?? earliest, intervalMs));
      const to = cursor ? cursor.to : (range.end ?? null);
      // Written as the windows' aggregations answer, through the rows' writer: a page within its first MiB goes out
      // whole (with Link when cut), a longer one streams.
      const out = new RowsResponse(
        res,
        scope.signal,
        deps.writeTimeoutMs,
        barsFraming(exchange, entry.ticker, interval),
      );
      const page = await deps.reader.bars(scope, { exchange, entry, intervalMs, from, to, limit }, out);
      const nextCursor =
        page.next === null
          ? null
          : deps.cursors.encode(
              {
                kind: 'bar',
                exchange,
                ticker: entry.ticker,
                position: { ts: page.next, sequence: BigInt(intervalMs), skip: 0 },
                to,
              },
              caller,
            );
      out.finish({
        count: page.count,
        nextCursor,
        nextLink: nextCursor === null ? null : nextLink(exchange, 'bars', entry.ticker, query, nextCursor),
        gaps: [],
      });
    }),
  );

  router.get('/coverage/:ticker', (req, res, next) =>
    guarded(req, res, next, 'coverage', async (scope) => {
      const exchange = res.locals.exchange as ExchangeKey;
      const range = parseTimeRange(req.query as Record<string, unknown>);
      const entry = await visibleEntry(scope, req, exchange);
      const now = deps.now();
      const window = callerWindow(req.caller, entry.ticker, now);
      const { from, to } = effectiveRange(req.caller, entry.ticker, now, range);
      const empty = to !== null && to < from;
      const [coverage, gaps] = empty
        ? [undefined, []]
        : await Promise.all([
            deps.reader.coverage(scope, exchange, entry.ticker, from, to),
            deps.reader.gaps(scope, exchange, entry.ticker, { from, to }),
          ]);
      const iso = (ts: number | null | undefined) => (ts === null || ts === undefined ? null : timestampText(ts));
      const kind = (k: RowKind) => ({
        rows: coverage?.[k].rows ?? 0,
        ...(k === 'snapshot' ? { books: coverage?.[k].books ?? 0 } : {}),
        first_ts: iso(coverage?.[k].firstTs),
        last_ts: iso(coverage?.[k].lastTs),
      });
      const v = coverage?.verification;
      const verifications = {
        count: v?.count ?? 0,
        first_ts: iso(v?.firstTs),
        last_ts: iso(v?.lastTs),
        methods: Object.fromEntries(VERIFICATION_METHODS.map((m) => [m, v?.methods[m] ?? 0])),
      };
      res
        .type('application/json')
        .send(
          `{"exchange":${JSON.stringify(exchange)},"ticker":${JSON.stringify(entry.ticker)},` +
            `"start_ts":"${timestampText(from)}","end_ts":${to === null ? 'null' : `"${timestampText(to)}"`},` +
            `"snapshots":${JSON.stringify(kind('snapshot'))},"deltas":${JSON.stringify(kind('delta'))},` +
            `"verifications":${JSON.stringify(verifications)},` +
            `"gaps":[${gaps.map(gapJson).join(',')}],` +
            `"window":{"start_ts":"${timestampText(window.start)}","rule":"${window.rule}","days":${window.days ?? 'null'}}}`,
        );
    }),
  );

  router.get('/book/:ticker', (req, res, next) =>
    guarded(req, res, next, 'book', async (scope) => {
      const exchange = res.locals.exchange as ExchangeKey;
      const query = req.query as Record<string, unknown>;
      const givenAt = parseAt(query);
      const depth = parseDepth(query, MAX_BOOK_DEPTH);
      const entry = await visibleEntry(scope, req, exchange);
      const now = deps.now();
      const earliest = windowStart(req.caller, entry.ticker, now);
      const at = givenAt ?? now;
      if (at < earliest) {
        throw new AppError(
          'invalid_timestamp',
          `at ${timestampText(at)} is before the start of your window for ${entry.ticker}, ${timestampText(earliest)}`,
        );
      }
      const [answer, around] = await Promise.all([
        deps.reader.book(scope, exchange, entry, at, earliest),
        deps.reader.verifiedAround(scope, exchange, entry.ticker, earliest, at),
      ]);
      const head = `{"exchange":${JSON.stringify(exchange)},"ticker":${JSON.stringify(entry.ticker)},"at":"${timestampText(at)}"`;
      const verified = `"verified":${verifiedJson(around)}`;
      if (answer.status !== 'ok') {
        const gap = answer.status === 'in_gap' ? gapJson(answer.gap) : 'null';
        res
          .type('application/json')
          .send(
            `${head},"status":"${answer.status}","snapshot_ts":null,"last_delta":null,"gap":${gap},"base_gap":null,"bids":null,"asks":null,${verified}}`,
          );
        return;
      }
      const { book, baseGap } = answer;
      const last = book.lastDelta;
      res
        .type('application/json')
        .send(
          `${head},"status":"ok","snapshot_ts":${book.snapshotTs === null ? 'null' : `"${timestampText(book.snapshotTs)}"`},` +
            `"last_delta":${last === undefined ? 'null' : `{"ts":"${timestampText(last.ts)}","sequence":${last.sequence}}`},` +
            `"gap":null,"base_gap":${baseGap === null ? 'null' : gapJson(baseGap)},` +
            `"bids":${JSON.stringify(levels(book.bids, 'descending', depth))},` +
            `"asks":${JSON.stringify(levels(book.asks, 'ascending', depth))},${verified}}`,
        );
    }),
  );
  return router;
}

/**
 * `verified` of a book answer: the verification points around its moment, each as its moment and method (null:
 * none) — `{"before":…,"before_method":…,"after":…,"after_method":…}`.
 */
function verifiedJson(around: VerifiedAround): string {
  const ts = (p: VerifiedAround['before']) => (p === null ? 'null' : `"${timestampText(p.ts)}"`);
  const method = (p: VerifiedAround['before']) => (p === null ? 'null' : `"${p.method}"`);
  return (
    `{"before":${ts(around.before)},"before_method":${method(around.before)},` +
    `"after":${ts(around.after)},"after_method":${method(around.after)}}`
  );
}

/** The first multiple of `step` at or after `ts`. */
function alignUp(ts: number, step: number): number {
  return Math.ceil(ts / step) * step;
}

/** The path and query of the next page: the same request with `cursor` in place of start_ts and end_ts. */
function nextLink(
  exchange: ExchangeKey,
  endpoint: Endpoint,
  ticker: string,
  query: Record<string, unknown>,
  cursor: string,
): string {
  const params = new URLSearchParams();
  for (const name of ['interval', 'limit', 'format', 'fields', 'include']) {
    const value = query[name];
    if (typeof value === 'string') params.set(name, value);
  }
  params.set('cursor', cursor);
  return `/api/${exchange}/${endpoint}/${encodeURIComponent(ticker)}?${params.toString()}`;
}
