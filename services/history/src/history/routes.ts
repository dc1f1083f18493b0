/**
 * The spec's history endpoints:
 *
 *   GET /api/{exchange}/tickers?prefix=
 *   GET /api/{exchange}/snapshots/{ticker}?start_ts&end_ts&limit
 *   GET /api/{exchange}/deltas/{ticker}?start_ts&end_ts&limit
 *
 * Every decided behaviour is listed in docs/history.md ("API"); the rules of the spec are cited where they apply.
 */
import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import { canonicalExchange, type Caller, type ExchangeKey } from '@depthgate/auth';
import {
  TICKER_PATTERN,
  classifyClickHouseError,
  type HistoryStore,
  type OrderBookQueries,
  type QueryScope,
  type RowKind,
  type WindowRead,
} from '@depthgate/history-store';
import { AppError, type Logger } from '@depthgate/service-kit';
import { canSeeTicker, effectiveRange, windowStart } from './access';
import type { Endpoint, HistoryMetrics } from './metrics';
import { parseLimit, parseTimeRange, singleParam } from './params';
import { WindowPlanner } from './planner';
import { RowsResponse } from './rows-response';
import type { CatalogueCache } from './store';

export interface HistoryRoutesDeps {
  store: HistoryStore;
  queries: OrderBookQueries;
  catalogue: CatalogueCache;
  metrics: HistoryMetrics;
  logger: Logger;
  queryTimeoutMs: number;
  defaultLimit: number;
  maxLimit: number;
  now: () => number;
}

/** Windows expected to return at most this many rows run on one ClickHouse thread. */
const SINGLE_THREAD_ROWS = 5000;
/** Extra snapshot rows asked for, to find the end of the last book in the same read. */
export const SNAPSHOT_SLACK_ROWS = 1000;

function unknownTicker(exchange: ExchangeKey, ticker: string): AppError {
  const shown = ticker.length > 80 ? `${ticker.slice(0, 80)}…` : ticker;
  return new AppError('unknown_ticker', `Unknown ticker ${JSON.stringify(shown)} on ${exchange}`);
}

/** `/:exchange` → the canonical exchange key (aliases and case accepted), else 404 unknown_exchange. */
export const resolveExchange: RequestHandler = (req, res, next) => {
  const given = String(req.params.exchange ?? '');
  const exchange = canonicalExchange(given);
  if (!exchange) {
    const shown = given.length > 40 ? `${given.slice(0, 40)}…` : given;
    next(
      new AppError('unknown_exchange', `Unknown exchange ${JSON.stringify(shown)}: use venue_b, venue_c or venue_a_us`),
    );
    return;
  }
  res.locals.exchange = exchange;
  next();
};

export function historyRoutes(deps: HistoryRoutesDeps): Router {
  const router = express.Router({ mergeParams: true });

  /** Maps a failure to the answer: an AppError to send, or nothing when the connection must be cut. */
  function fail(err: unknown, req: Request, res: Response, scope: QueryScope, endpoint: Endpoint): AppError | null {
    if (err instanceof AppError) return err;
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
      const prefix = singleParam(query, 'prefix', 'invalid_request') ?? '';
      const caller = req.caller;
      let tickers: string[] = [];
      // A prefix outside the ticker grammar matches no ticker: the list is empty (and no query is needed).
      if (prefix === '' || TICKER_PATTERN.test(prefix)) {
        const allowedPrefixes = caller?.kind === 'key' ? caller.key.tickerPrefixes : null;
        const rows = await deps.catalogue.tickers(exchange, { prefix, allowedPrefixes }, scope);
        const now = deps.now();
        // Listed: visible to the caller (rule 4) and with data inside the caller's window for that ticker.
        tickers = rows
          .filter((r) => canSeeTicker(caller, r.ticker) && r.lastTs >= windowStart(caller, r.ticker, now))
          .map((r) => r.ticker);
      }
      res.json({ exchange, count: tickers.length, tickers });
    }),
  );

  const rows =
    (kind: RowKind, endpoint: Endpoint): RequestHandler =>
    (req, res, next) =>
      guarded(req, res, next, endpoint, async (scope) => {
        const exchange = res.locals.exchange as ExchangeKey;
        const query = req.query as Record<string, unknown>;
        const range = parseTimeRange(query);
        const limit = parseLimit(query, deps.defaultLimit, deps.maxLimit);
        const requested = String(req.params.ticker ?? '');
        if (!TICKER_PATTERN.test(requested)) throw unknownTicker(exchange, requested);
        const caller: Caller | undefined = req.caller;
        const entry = await deps.catalogue.catalogueEntry(exchange, requested, scope);
        // A ticker outside the key's ticker_prefixes answers exactly like one that does not exist.
        if (!entry || !canSeeTicker(caller, entry.ticker)) throw unknownTicker(exchange, requested);

        const { from, to } = effectiveRange(caller, entry.ticker, deps.now(), range);
        const head = `{"exchange":${JSON.stringify(exchange)},"ticker":${JSON.stringify(entry.ticker)},"rows":[`;
        const out = new RowsResponse(res, scope.signal, head, kind);
        const span = entry.spans[kind];
        let windows = 0;
        if (span && (to === null || from <= to)) {
          const planner = new WindowPlanner({ from, to, span, limit });
          const onChunk = (chunk: Buffer) => out.chunk(chunk);
          for (let w = planner.next(); w !== null; w = planner.next()) {
            const before = out.rows;
            const want = planner.remaining;
            const read = (limit: number): WindowRead => ({
              exchange,
              ticker: entry.ticker,
              window: w,
              limit,
              singleThread: want <= SINGLE_THREAD_ROWS,
            });
            if (kind === 'delta') {
              await deps.queries.deltas(scope, read(want), onChunk);
              out.endOfQuery();
            } else {
              // Snapshots: ask for a few rows more than wanted, hold back from the want-th row on, and pass on
              // only the rest of that row's book: a book is never cut, and this costs one read, not two.
              const asked = want + SNAPSHOT_SLACK_ROWS;
              const receivedBefore = out.received;
              out.holdFrom(receivedBefore + want - 1);
              await deps.queries.snapshots(scope, read(asked), onChunk);
              out.endOfQuery();
              if (!(await out.releaseBook(out.received - receivedBefore === asked))) {
                // That book is longer than the slack: read it to its end exactly (two reads, rarely).
                await deps.queries.snapshotsToBookEnd(scope, read(want), want - 1, onChunk);
                out.endOfQuery();
              }
            }
            deps.metrics.rowsStreamed.inc({ endpoint }, out.rows - before);
            planner.record(out.rows - before);
            windows++;
          }
        }
        deps.metrics.windows.observe({ endpoint }, windows);
        out.finish();
      });

  router.get('/snapshots/:ticker', rows('snapshot', 'snapshots'));
  router.get('/deltas/:ticker', rows('delta', 'deltas'));
  return router;
}
