import { Router } from './router';
import { json } from './types';

describe('router', () => {
  const ok = () => json(200, {});
  const r = new Router('/trade-api/v2')
    .get('/markets', ok)
    .get('/markets/:ticker', ok)
    .get('/markets/:ticker/orderbook', ok, 'required')
    .post('/orders', ok);

  test('matches exact and parameterised paths under the prefix, decoding parameters', () => {
    expect(r.match('GET', '/trade-api/v2/markets')?.params).toEqual({});
    expect(r.match('GET', '/trade-api/v2/markets/KXFED-26MAR-T4.25')?.params).toEqual({ ticker: 'KXFED-26MAR-T4.25' });
    const m = r.match('GET', '/trade-api/v2/markets/A%20B/orderbook');
    expect(m?.params).toEqual({ ticker: 'A B' });
    expect(m?.route.auth).toBe('required');
    expect(r.match('HEAD', '/trade-api/v2/markets')).toBeDefined();
  });

  test('does not match another method, another prefix, an empty segment or a bad escape', () => {
    expect(r.match('POST', '/trade-api/v2/markets')).toBeUndefined();
    expect(r.match('GET', '/markets')).toBeUndefined();
    expect(r.match('GET', '/trade-api/v2/markets//orderbook')).toBeUndefined();
    expect(r.match('GET', '/trade-api/v2/markets/%E0%A4%A/orderbook')).toBeUndefined();
    expect(r.match('GET', '/trade-api/v2/exchange/series/fee-changes')).toBeUndefined();
  });
});
