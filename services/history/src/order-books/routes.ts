/**
 * The spec's history endpoints:
 *
 *   GET /api/{exchange}/tickers?prefix=
 *   GET /api/{exchange}/snapshots/{ticker}?start_ts&end_ts&limit
 *   GET /api/{exchange}/deltas/{ticker}?start_ts&end_ts&limit
 *
 * Each reads as parse → authorise → read → pipe: parameters (params.ts), what the caller may see (access.ts), the
 * order-book reader (reader.ts), the response body (responses.ts). Every ClickHouse query of a request runs under
 * its QueryScope; a failure becomes an error answer, or a cut connection once the answer has started. Every decided
 * behaviour is listed in docs/history.md ("API"); the rules of the spec are cited where they apply.
 */
import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import { canonicalExchange, type Caller, type ExchangeKey } from '@depthgate/auth';
import {
  TICKER_PATTERN,
  classifyClickHouseError,
  type HistoryStore,
  type QueryScope,
  type RowKind,
} from '@depthgate/history-store';
import { AppError, type Logger } from '@depthgate/service-kit';
import type { Endpoint, HistoryMetrics } from '../metrics';
import { canSeeTicker, effectiveRange, windowStart } from './access';
import { parseLimit, parseTimeRange, singleParam } from './params';
import type { OrderBookReader } from './reader';
import { RowsResponse, rowsHead } from './responses';

export interface HistoryRoutesDeps {
  /** Makes each request's QueryScope. */
  store: HistoryStore;
  reader: OrderBookReader;
  metrics: HistoryMetrics;
  logger: Logger;
  queryTimeoutMs: number;
  defaultLimit: number;
  maxLimit: number;
  now: () => number;
}

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

  const rows =
    (kind: RowKind, endpoint: Endpoint): RequestHandler =>
    (req, res, next) =>
      guarded(req, res, next, endpoint, async (scope) => {
        // Parse.
        const exchange = res.locals.exchange as ExchangeKey;
        const query = req.query as Record<string, unknown>;
        const range = parseTimeRange(query);
        const limit = parseLimit(query, deps.defaultLimit, deps.maxLimit);
        const requested = String(req.params.ticker ?? '');
        if (!TICKER_PATTERN.test(requested)) throw unknownTicker(exchange, requested);
        // Authorise: a ticker outside the key's ticker_prefixes answers exactly like one that does not exist; the
        // range is clamped to the caller's window.
        const caller: Caller | undefined = req.caller;
        const entry = await deps.reader.entry(scope, exchange, requested);
        if (!entry || !canSeeTicker(caller, entry.ticker)) throw unknownTicker(exchange, requested);
        const { from, to } = effectiveRange(caller, entry.ticker, deps.now(), range);
        // Read, and pipe to the response as the rows come.
        const out = new RowsResponse(res, scope.signal, rowsHead(exchange, entry.ticker));
        const count = await deps.reader.read(scope, { kind, exchange, entry, from, to, limit }, out);
        out.finish(count);
      });

  router.get('/snapshots/:ticker', rows('snapshot', 'snapshots'));
  router.get('/deltas/:ticker', rows('delta', 'deltas'));
  return router;
}
