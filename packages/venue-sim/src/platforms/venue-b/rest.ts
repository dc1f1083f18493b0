// https://docs.kalshi.com/api-reference
import { parseDay } from '../../core/time';
import { Router } from '../../http/router';
import type { PlatformContext } from '../context';
import type { SimHost } from '../platform';
import { accountRoutes } from './account-routes';
import { verifyKalshi } from './auth';
import type { KalshiCatalog } from './catalog';
import { KALSHI_PREFIX, type KalshiApi, kalshiErrors } from './common';
import { eventRoutes } from './events';
import { exchangeRoutes } from './exchange';
import { historicalRoutes } from './historical';
import { marketRoutes } from './markets';
import { buildKalshiReference } from './reference';
import { referenceRoutes } from './reference-routes';
import { KalshiTape } from './tape';

export { KALSHI_PREFIX, kalshiErrors } from './common';

const MINUTE_MS = 60_000;

/**
 * The Trade API v2 host: every read of kalshi-typescript 3.30 and of ccxt's `prediction.kalshi`, in Kalshi's shapes
 * (README.md lists them). Market data follows the moving books through the tape (tape.ts): live quotes and trades are
 * recorded from the engine, the past derives from them and the seed, so repeated calls agree.
 */
export function kalshiHost(ctx: PlatformContext, catalog: KalshiCatalog): SimHost {
  const { engine, opts, credentials, keys } = ctx;
  const day = parseDay(opts.catalogDate);
  const startedMs = ctx.clock();
  const startMinute = Math.floor(startedMs / MINUTE_MS);
  const tape = new KalshiTape(opts.seed, [
    ...catalog.markets.map((m) => {
      const book = engine.book('venue-b', m.ticker);
      return {
        ticker: m.ticker,
        openMs: Date.parse(m.open_time),
        endMs: Infinity,
        anchorMinute: startMinute,
        anchor: { bid: book?.bids.best() ?? m.mid - 100, ask: book?.asks.best() ?? m.mid + 100 },
        liveFromMinute: startMinute,
        // A moving book's trades are its own from the engine's start (before it: the draws, the market's past).
        tradesLiveFromMs: book && engine.isMoving('venue-b') ? engine.startTs : Infinity,
      };
    }),
    ...catalog.historical.markets.map((m) => ({
      ticker: m.ticker,
      openMs: Date.parse(m.open_time),
      endMs: Date.parse(m.close_time),
      anchorMinute: Math.floor(Date.parse(m.open_time) / MINUTE_MS),
      anchor: { bid: m.mid - 100, ask: m.mid + 100 },
      liveFromMinute: Infinity,
    })),
  ]);
  engine.on('venue-b', (inst, event, book) => {
    tape.observe(inst.ticker, event.ts, book.bids.best() ?? 0, book.asks.best() ?? 10000);
    if (event.trades.length > 0) tape.record(inst.ticker, event.ts, event.trades);
  });
  const api: KalshiApi = {
    ctx,
    catalog,
    reference: buildKalshiReference(opts.seed, catalog, day),
    tape,
    day,
    startedMs,
    now: ctx.clock,
  };
  const r = new Router(KALSHI_PREFIX);
  for (const family of [marketRoutes, eventRoutes, exchangeRoutes, historicalRoutes, referenceRoutes, accountRoutes]) {
    family(r, api);
  }
  return {
    router: r,
    errors: kalshiErrors,
    rejectInvalidOnPublic: opts.assumptions.rejectInvalidAuthOnPublicRoutes,
    verify: (input) =>
      verifyKalshi(input, {
        accessKey: credentials.kalshi.accessKey,
        publicKey: keys.kalshiPublicKey,
        toleranceMs: opts.assumptions.kalshiTimestampToleranceMs,
        now: ctx.clock,
      }),
  };
}
