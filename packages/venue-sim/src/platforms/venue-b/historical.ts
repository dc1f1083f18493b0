// https://docs.kalshi.com/getting_started/historical_data, …/api-reference/historical/get-historical-markets
import { isoSeconds } from '../../core/time';
import { json } from '../../http/types';
import { type Candle, candles } from './candles';
import { dollars, fp, kalshiErrors, Query, type RouteFamily } from './common';
import { candleParams, filterMarkets, marketJson, tradePage } from './markets';

/**
 * The historical tier [V]: markets settled before the cutoff, their candlesticks and trades, are served only here.
 * The cutoff sits 90 days before the catalogue date; the historical catalogue's markets all settled before it.
 */
export const historicalRoutes: RouteFamily = (r, api) => {
  const { catalog } = api;
  const historical = catalog.historical;

  r.get('/historical/cutoff', () => {
    const cutoff = isoSeconds(catalog.cutoffMs);
    return json(200, {
      market_settled_ts: cutoff,
      trades_created_ts: cutoff,
      orders_updated_ts: cutoff,
      market_positions_last_updated_ts: cutoff,
    });
  });

  r.get('/historical/markets', (req) => {
    const q = new Query(req.params);
    const page = q.page(filterMarkets(q, historical, 'settled'), 1000, 100);
    if (q.error) return q.error;
    return json(200, { markets: page.items.map((m) => marketJson(api, m)), cursor: page.cursor });
  });

  r.get('/historical/markets/:ticker', (req) => {
    const m = historical.marketsByTicker.get(req.pathParams.ticker as string);
    return m ? json(200, { market: marketJson(api, m) }) : kalshiErrors.notFound(req);
  });

  r.get('/historical/markets/:ticker/candlesticks', (req) => {
    const m = historical.marketsByTicker.get(req.pathParams.ticker as string);
    if (!m) return kalshiErrors.notFound(req);
    const q = new Query(req.params);
    const c = candleParams(q);
    if (q.error) return q.error;
    const list = candles(api.tape, { ticker: m.ticker, ...c, now: api.now() });
    return json(200, { ticker: m.ticker, candlesticks: list.map(historicalCandleJson) });
  });

  // Trades before the cutoff (`trades_created_ts`), of every market; the later ones are on `/markets/trades`.
  r.get('/historical/trades', (req) => tradePage(api, req, -Infinity, catalog.cutoffMs - 1));
};

/**
 * Kalshi's `MarketCandlestickHistorical` [V]: dollar strings under plain names (`open`, not `open_dollars`), counts
 * under `volume`/`open_interest`, and trade prices null for a period without trades.
 */
function historicalCandleJson(c: Candle): Record<string, unknown> {
  const ohlc = (x: readonly number[]) => ({
    open: dollars(x[0] as number),
    low: dollars(x[2] as number),
    high: dollars(x[1] as number),
    close: dollars(x[3] as number),
  });
  const price = (v: number | undefined) => (v === undefined ? null : dollars(v));
  return {
    end_period_ts: c.end,
    yes_bid: ohlc(c.bid),
    yes_ask: ohlc(c.ask),
    price: {
      open: price(c.price?.open),
      low: price(c.price?.low),
      high: price(c.price?.high),
      close: price(c.price?.close),
      mean: price(c.price?.mean),
      previous: price(c.previous),
    },
    volume: fp(c.volume),
    open_interest: fp(c.openInterest),
  };
}
