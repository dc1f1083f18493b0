/**
 * The encoder a replay of one recorded exchange's ticker uses, with what a replay outside a venue's subscription
 * knows (the HTTP stream: no subscription ids of the client's, no market metadata beyond the ticker). Values not
 * recorded are those of README.md ("Values not recorded"): Kalshi's book on `sid` 1 from `seq` 1 and its trades on
 * `sid` 2; the CLOB's `market` (the condition id, not recorded) empty; instruments' decimal places not known, so
 * prices and sizes in their shortest exact form.
 */
import type { ExchangeKey } from '@depthgate/platforms';
import { clobEncoder, coinbaseEncoder, geminiEncoder, kalshiEncoder, pmUsEncoder, type VenueEncoder } from './engine';

export const HTTP_KALSHI_SIDS = { book: 1, trades: 2 } as const;

export function encoderFor(exchange: ExchangeKey, ticker: string): VenueEncoder {
  switch (exchange) {
    case 'venue_b':
      return kalshiEncoder({ ticker, book: { sid: HTTP_KALSHI_SIDS.book, seq: 0 }, tradeSid: HTTP_KALSHI_SIDS.trades });
    case 'venue_c':
      return geminiEncoder({ symbol: ticker });
    case 'venue_a_us':
      return pmUsEncoder({ slug: ticker, requestId: 'replay', tradeRequestId: 'replay-trades' });
    case 'venue_a_clob':
      return clobEncoder({ asset: ticker, market: '' });
    case 'venue_d':
      return coinbaseEncoder({ product: ticker });
    default: {
      const unreachable: never = exchange;
      throw new Error(`no replay encoder for ${String(unreachable)}`);
    }
  }
}
