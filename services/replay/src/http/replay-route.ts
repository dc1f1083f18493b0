/**
 * HTTP replay (issue 25, item 3):
 *
 *   GET /api/{exchange}/replay/{ticker}?from=&to=[&clock=venue|received]
 *
 * streams one ticker's recorded window as the venue's own WebSocket messages, as NDJSON: one line per message,
 * `{"received_ts":"…","ts":"…","message":<the venue's message>}` (times UTC RFC 3339 with milliseconds; `message` the
 * venue's JSON as the socket would carry it), in order — the book at `from` in the venue's snapshot form, then every
 * recorded change and trade of (`from`, `to`], a recorded gap as the venue's reset form — then an end line
 * `{"type":"end","count":N}` (N: the messages), as the history's NDJSON streams end. No end line: the stream was cut.
 *
 * Parse → authorise → read → pipe, as the history's endpoints: `from` and `to` by the API's one timestamp rule
 * (service-kit `parseMoment`), the exchange and the ticker resolved and checked as the history does (packages/auth
 * access.ts), the window inside the caller's (`windowStart`), opened (the book at `from`, the first page of rows) under
 * one QueryScope, then read page by page as it is written (source.ts, replayPaged: the next page is read while the
 * one before is written) with backpressure: a replay holds two pages of rows and a book, a slow reader at most the
 * socket's buffer and one batch besides. A caller has at most REPLAY_HTTP_MAX_CONCURRENT_* replays running at once
 * (more: 429 too_many_connections, with Retry-After), and one that takes nothing of what waits for
 * REPLAY_HTTP_WRITE_TIMEOUT_MS is cut: a reader that stopped holds nothing for long.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import express, { type Router } from 'express';
import { unknownExchange, type ExchangeKey, type Exchanges, type RunningRequests } from '@depthgate/auth';
import type { HistoryStore, OrderBookQueries, QueryScope } from '@depthgate/history-store';
import { AppError, drained, type Logger } from '@depthgate/service-kit';
import { PageWait, replayPaged } from '../engine';
import { encoderFor } from '../encoders';
import type { ReplayMetrics } from '../metrics';
import { checkWindowStart, iso, parseClock, parseWindow, visibleTicker } from '../request';
import { readFailure } from '../read-failure';
import { openWindow } from '../source';

export interface ReplayRouteDeps {
  store: HistoryStore;
  queries: OrderBookQueries;
  metrics: ReplayMetrics;
  logger: Logger;
  exchanges: Exchanges<ExchangeKey>;
  queryTimeoutMs: number;
  /** Rows per read of a window (REPLAY_PAGE_ROWS). */
  pageRows: number;
  now: () => number;
  /** HTTP replays a caller may have running at once (REPLAY_HTTP_MAX_CONCURRENT_*), counted in `limits`. */
  /** HTTP replays a caller may have running at once (429 too_many_connections past them). */
  running: RunningRequests;
  /** A replay whose caller takes nothing waiting for this long is cut (REPLAY_HTTP_WRITE_TIMEOUT_MS). */
  writeTimeoutMs: number;
}

/** The caller read nothing of what waited for REPLAY_HTTP_WRITE_TIMEOUT_MS: its replay is cut. */
class StalledReader extends Error {
  constructor(ms: number) {
    super(`the caller read nothing for ${ms} ms`);
    this.name = 'StalledReader';
  }
}

/** Lines are written in batches of about this many bytes (one `write` each). */
const BATCH_BYTES = 64 * 1024;

/** Resolves `exchange` (keys and aliases, any case) or answers 404 unknown_exchange naming them all. */
function resolveExchange(exchanges: Exchanges<ExchangeKey>): RequestHandler {
  return (req, res, next) => {
    const given = String(req.params.exchange ?? '');
    const exchange = exchanges.canonical(given);
    if (!exchange) {
      next(unknownExchange(exchanges, given));
      return;
    }
    res.locals.exchange = exchange;
    next();
  };
}

export function replayRoutes(deps: ReplayRouteDeps): Router {
  const router = express.Router();

  /** A failure before the answer started → the error answer; after → undefined (the stream is cut). */
  function answerFor(err: unknown, req: Request, res: Response, scope: QueryScope): AppError | undefined {
    if (err instanceof AppError) return err;
    if (res.headersSent) return undefined;
    const failure = readFailure(err, scope);
    switch (failure.kind) {
      case 'cancelled':
        return undefined;
      case 'timeout':
        return new AppError(
          'query_timeout',
          `Reading the window ran over its time budget of ${deps.queryTimeoutMs} ms and was cancelled; replay a shorter window`,
        );
      case 'unavailable':
        deps.logger.warn({ req_id: req.id, failure: failure.kind, code: failure.code }, 'ClickHouse unavailable');
        return new AppError('service_unavailable', 'The history store is unavailable; retry shortly', {
          headers: { 'Retry-After': '5' },
        });
      case 'data':
        deps.logger.error({ req_id: req.id, err: { message: failure.message } }, 'recorded rows cannot be replayed');
        return new AppError('internal_error', 'Internal server error');
      case 'error':
        deps.logger.error(
          { req_id: req.id, code: failure.code, err: { message: failure.message.slice(0, 1000) } },
          'replay failed',
        );
        return new AppError('internal_error', 'Internal server error');
    }
  }

  router.get('/:exchange/replay/:ticker', resolveExchange(deps.exchanges), (req, res, next: NextFunction) => {
    const exchange = res.locals.exchange as ExchangeKey;
    const scope = deps.store.scope(deps.queryTimeoutMs, { answerStarted: () => res.headersSent });
    let gone = false;
    const onClose = () => {
      if (res.writableFinished) return;
      gone = true;
      scope.abort('cancelled');
    };
    res.once('close', onClose);
    let release: (() => void) | undefined;
    const run = async () => {
      // Parse: every parameter, before any query.
      const { from, to } = parseWindow(req.query as Record<string, unknown>);
      const clock = parseClock(req.query.clock);
      // A place among the caller's running replays, held to the end.
      release = await deps.running.take(req.caller);
      if (gone) return;
      // Authorise: the ticker as the caller may see it, the window inside the caller's.
      const ticker = await visibleTicker(deps.queries, scope, req.caller, exchange, String(req.params.ticker ?? ''));
      const visibleFrom = checkWindowStart(req.caller, ticker, from, deps.now());
      // Open (the book at `from`, the first page), then pipe with backpressure, the pages read as they are needed.
      const window = await openWindow(deps.queries, scope, {
        exchange,
        ticker,
        from,
        to,
        clock,
        pageRows: deps.pageRows,
        visibleFrom,
      });
      const messages = replayPaged(window, encoderFor(exchange, ticker));
      res.status(200).type('application/x-ndjson; charset=utf-8');
      res.setHeader('Cache-Control', 'no-store');
      let count = 0;
      let batched = 0;
      let batch = '';
      const flush = async () => {
        const ok = res.write(batch);
        deps.metrics.messages.inc({ exchange }, batched);
        batch = '';
        batched = 0;
        if (ok || gone) return;
        // The caller has REPLAY_HTTP_WRITE_TIMEOUT_MS to take what waits (its reading frees a place in the socket).
        await drained(res, AbortSignal.timeout(deps.writeTimeoutMs));
        if (!gone && res.writableNeedDrain) throw new StalledReader(deps.writeTimeoutMs);
      };
      for (const m of messages) {
        if (gone) return;
        if (m instanceof PageWait) {
          // The next page is still being read: what is batched goes out meanwhile.
          if (batched > 0) await flush();
          await m.ready;
          continue;
        }
        batch += `{"received_ts":"${iso(m.received_ts)}","ts":"${iso(m.ts)}","message":${m.text}}\n`;
        count++;
        batched++;
        if (batch.length >= BATCH_BYTES) await flush();
      }
      if (gone) return;
      deps.metrics.messages.inc({ exchange }, batched);
      res.end(`${batch}{"type":"end","count":${count}}\n`);
      deps.metrics.replays.inc({ exchange, outcome: 'complete' });
    };
    run()
      .catch((err: unknown) => {
        const answer = answerFor(err, req, res, scope);
        // A page read ahead ends with the request: killed, not left running for an answer nobody reads.
        scope.abort('cancelled');
        if (answer) {
          next(answer);
          return;
        }
        if (!gone) {
          deps.metrics.replays.inc({ exchange, outcome: 'cut' });
          if (err instanceof StalledReader)
            deps.logger.info(
              { req_id: req.id, err: { message: err.message } },
              'replay cut: the caller stopped reading',
            );
          else
            deps.logger.warn({ req_id: req.id, err: { message: (err as Error).message } }, 'replay failed: stream cut');
        }
        if (!res.destroyed) res.destroy();
      })
      .finally(() => {
        if (gone) deps.metrics.replays.inc({ exchange, outcome: 'cancelled' });
        release?.();
        scope.dispose();
        res.off('close', onClose);
      });
  });
  return router;
}
