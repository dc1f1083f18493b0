import { generateKeyPairSync } from 'node:crypto';
import { loadConfig } from '../config';
import { parseGatewayTarget } from '../proxy/path';
import { createPlatforms, type GatewayPlatforms } from './registry';
import { kalshiPath } from './venue-b';
import type { Platform } from './types';

function platform(platforms: GatewayPlatforms, key: string): Platform {
  const p = platforms.byKey[key];
  if (!p) throw new Error(`no platform ${key}`);
  return p;
}

function route(platform: Platform, target: string) {
  const parsed = parseGatewayTarget(`/api/v1/${platform.key}${target}`);
  if (!parsed.ok) throw new Error(parsed.reason);
  const r = platform.route(parsed.target, parsed.target.query);
  return {
    target: r.target.id,
    url: `${r.target.origin}${r.target.basePath}${r.path}${r.query ? `?${r.query}` : ''}`,
    sign: r.sign,
    signer: r.target.signer?.name,
  };
}

describe('platform routing with production defaults', () => {
  const platforms = createPlatforms(loadConfig({}));

  it('maps the spec’s hyphenated Kalshi paths to the real ones and passes real paths unchanged', () => {
    const k = platform(platforms, 'venue-b');
    expect(route(k, '/search/filters').url).toBe(
      'https://api.elections.kalshi.com/trade-api/v2/search/filters_by_sport',
    );
    expect(route(k, '/historical/cutoff-timestamps').url).toBe(
      'https://api.elections.kalshi.com/trade-api/v2/historical/cutoff',
    );
    expect(route(k, '/structured-targets?limit=5').url).toBe(
      'https://api.elections.kalshi.com/trade-api/v2/structured_targets?limit=5',
    );
    expect(route(k, '/structured-targets/abc').url).toBe(
      'https://api.elections.kalshi.com/trade-api/v2/structured_targets/abc',
    );
    expect(route(k, '/incentive-programs').url).toBe(
      'https://api.elections.kalshi.com/trade-api/v2/incentive_programs',
    );
    expect(route(k, '/exchange/series/fee-changes').url).toBe(
      'https://api.elections.kalshi.com/trade-api/v2/series/fee_changes',
    );
    expect(route(k, '/exchange/user-data-timestamp').url).toBe(
      'https://api.elections.kalshi.com/trade-api/v2/exchange/user_data_timestamp',
    );
    for (const real of [
      '/search/filters_by_sport',
      '/historical/cutoff',
      '/structured_targets',
      '/exchange/announcements',
      '/events/multivariate',
    ]) {
      expect(route(k, real).url).toBe(`https://api.elections.kalshi.com/trade-api/v2${real}`);
    }
    // Tickers keep their hyphens.
    expect(route(k, '/markets/KXBTCD-26MAR07-T100000/orderbook').url).toBe(
      'https://api.elections.kalshi.com/trade-api/v2/markets/KXBTCD-26MAR07-T100000/orderbook',
    );
    expect(kalshiPath(['markets', 'live-data'])).toEqual(['markets', 'live_data']);
    // The host's /v1 API (series search), unsigned.
    expect(route(k, '/v1/search/series?query=btc&page_size=5')).toMatchObject({
      target: 'venue-b/v1',
      url: 'https://api.elections.kalshi.com/v1/search/series?query=btc&page_size=5',
      sign: false,
    });
  });

  it('sends Polymarket US public data to the public host and private routes to the authenticated host', () => {
    const p = platform(platforms, 'venue-a-us');
    expect(route(p, '/events?limit=5&seriesId=1&seriesId=2&orderDirection=desc')).toMatchObject({
      target: 'venue-a-us',
      url: 'https://gateway.polymarket.us/v1/events?limit=5&seriesId=1&seriesId=2&orderDirection=desc',
      sign: false,
    });
    expect(route(p, '/sports/teams').url).toBe('https://gateway.polymarket.us/v1/sports/teams');
    expect(route(p, '/v2/leagues').url).toBe('https://gateway.polymarket.us/v2/leagues');
    expect(route(p, '/portfolio/positions')).toMatchObject({
      target: 'venue-a-us/auth',
      url: 'https://api.polymarket.us/v1/portfolio/positions',
      sign: true,
    });
  });

  it('routes CLOB profiles and market statistics to the hosts that serve them', () => {
    const c = platform(platforms, 'venue-a-clob');
    expect(route(c, '/book?token_id=123')).toMatchObject({
      target: 'venue-a-clob',
      url: 'https://clob.polymarket.com/book?token_id=123',
      sign: false,
    });
    expect(route(c, '/profile/0xAbC').url).toBe('https://gamma-api.polymarket.com/public-profile?address=0xAbC');
    expect(route(c, '/markets/0x5f/open-interest').url).toBe('https://data-api.polymarket.com/oi?market=0x5f');
    expect(route(c, '/markets/0x5f/top-holders?limit=3').url).toBe(
      'https://data-api.polymarket.com/holders?limit=3&market=0x5f',
    );
    expect(route(c, '/events/42/live-volume').url).toBe('https://data-api.polymarket.com/live-volume?id=42');
    expect(route(c, '/data/orders').sign).toBe(true);
    // The whole Data API under data-api/ (ccxt's urls.api.data).
    expect(route(c, '/data-api/trades?market=0x5f&limit=500')).toMatchObject({
      target: 'venue-a-clob/data',
      url: 'https://data-api.polymarket.com/trades?market=0x5f&limit=500',
      sign: false,
    });
    expect(route(c, '/data-api/').url).toBe('https://data-api.polymarket.com/');
    // The root (clob-client getOk) forwards, unsigned.
    expect(route(c, '/')).toMatchObject({ target: 'venue-a-clob', url: 'https://clob.polymarket.com/', sign: false });
  });

  it('signs only the private CLOB routes: public rewards, live activity and key validation go unsigned', () => {
    const c = platform(platforms, 'venue-a-clob');
    const signs = (path: string) => route(c, path).sign;
    expect(signs('/rewards/markets/current')).toBe(false);
    expect(signs('/rewards/markets/0x5f')).toBe(false);
    expect(signs('/live-activity/events/0x5f')).toBe(false);
    expect(signs('/auth/validate-readonly-api-key?address=0x1&key=k')).toBe(false);
    expect(signs('/markets/0x5f')).toBe(false);
    // The account's rewards and keys, and anything not known to be public, are signed.
    expect(signs('/rewards/user?date=2026-03-06')).toBe(true);
    expect(signs('/rewards/user/markets')).toBe(true);
    expect(signs('/rewards')).toBe(true);
    expect(signs('/auth/api-keys')).toBe(true);
    expect(signs('/auth/readonly-api-keys')).toBe(true);
    expect(signs('/notifications')).toBe(true);
    expect(signs('/rfq/data/best-quote')).toBe(true);
  });

  it('on mapped CLOB routes the mapping’s own parameter is the only one of its name', () => {
    const c = platform(platforms, 'venue-a-clob');
    expect(route(c, '/profile/0xAbC?address=0xEvil&x=1').url).toBe(
      'https://gamma-api.polymarket.com/public-profile?x=1&address=0xAbC',
    );
    expect(route(c, '/markets/0x5f/open-interest?market=0x1&market=0x2').url).toBe(
      'https://data-api.polymarket.com/oi?market=0x5f',
    );
    // However the caller spells the name, and behind a `;` some servers take as a separator.
    expect(route(c, '/markets/0x5f/positions?mark%65t=0x1&user=u;market=0x2&limit=3&marketx=1').url).toBe(
      'https://data-api.polymarket.com/positions?limit=3&marketx=1&market=0x5f',
    );
    expect(route(c, '/events/42/live-volume?id=7&%69d=8&id').url).toBe(
      'https://data-api.polymarket.com/live-volume?id=42',
    );
  });

  it('declares the read-only POST routes per target: CLOB batch reads, the Polymarket US order preview', () => {
    const post = (key: string) =>
      Object.fromEntries(platform(platforms, key).targets.map((t) => [t.id, [...(t.post ?? [])].sort()]));
    expect(post('venue-a-clob')).toEqual({
      'venue-a-clob': [
        '/batch-prices-history',
        '/books',
        '/last-trades-prices',
        '/midpoints',
        '/orders-scoring',
        '/prices',
        '/spreads',
      ],
      'venue-a-clob/data': [],
      'venue-a-clob/gamma': [],
    });
    expect(post('venue-a-us')).toEqual({ 'venue-a-us': [], 'venue-a-us/auth': ['/v1/order/preview'] });
    for (const key of ['venue-a', 'venue-b', 'venue-c', 'venue-d', 'venue-e'])
      for (const t of platform(platforms, key).targets) expect(t.post).toBeUndefined();
    expect(route(platform(platforms, 'venue-a-us'), '/order/preview')).toMatchObject({
      target: 'venue-a-us/auth',
      url: 'https://api.polymarket.us/v1/order/preview',
    });
  });

  it('puts unversioned Gemini resources under /v1 and keeps explicit versions', () => {
    const g = platform(platforms, 'venue-c');
    expect(route(g, '/prediction-markets/events?status=active').url).toBe(
      'https://api.gemini.com/v1/prediction-markets/events?status=active',
    );
    expect(route(g, '/v2/ticker/BTCUSD').url).toBe('https://api.gemini.com/v2/ticker/BTCUSD');
    expect(route(g, '/v1/book/btcusd').url).toBe('https://api.gemini.com/v1/book/btcusd');
  });

  it('routes IBKR portal paths to the Client Portal and the rest to the ForecastEx site', () => {
    const e = platform(platforms, 'venue-e');
    expect(route(e, '/trsrv/event/category-tree')).toMatchObject({
      target: 'venue-e/portal',
      url: 'https://localhost:5000/v1/api/trsrv/event/category-tree',
    });
    expect(route(e, '/iserver/secdef/search?symbol=USIP').url).toBe(
      'https://localhost:5000/v1/api/iserver/secdef/search?symbol=USIP',
    );
    expect(route(e, '/forecast/contract/details?conid=1').target).toBe('venue-e/portal');
    expect(route(e, '/contracts?page=1&pageSize=10')).toMatchObject({
      target: 'venue-e',
      url: 'https://forecastex.com/api/contracts?page=1&pageSize=10',
    });
    expect(e.keepAlive).toMatchObject({ path: '/tickle', intervalMs: 60_000 });
  });

  it('makes unsigned calls when no credentials are configured', () => {
    for (const p of Object.values(platforms.byKey)) for (const t of p.targets) expect(t.signer).toBeUndefined();
  });
});

describe('signers are attached where credentials are configured', () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 })
    .privateKey.export({ type: 'pkcs1', format: 'pem' })
    .toString();
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ type: 'sec1', format: 'pem' })
    .toString();
  const base = {
    KALSHI_ACCESS_KEY: 'k',
    KALSHI_PRIVATE_KEY: rsa,
    POLYMARKET_US_ACCESS_KEY: 'p',
    POLYMARKET_US_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
    POLYMARKET_CLOB_ADDRESS: '0x1',
    POLYMARKET_CLOB_API_KEY: 'a',
    POLYMARKET_CLOB_SECRET: 'AAAA',
    POLYMARKET_CLOB_PASSPHRASE: 'pp',
    COINBASE_API_KEY: 'c',
    COINBASE_API_SECRET: 'AAAA',
    COINBASE_API_PASSPHRASE: 'cp',
  };

  it('Kalshi signs everything; Coinbase and the CLOB sign private routes only', () => {
    const platforms = createPlatforms(loadConfig(base));
    expect(route(platform(platforms, 'venue-b'), '/markets')).toMatchObject({ sign: true, signer: 'kalshi-rsa-pss' });
    expect(route(platform(platforms, 'venue-d'), '/accounts')).toMatchObject({
      sign: true,
      signer: 'coinbase-exchange-hmac',
    });
    expect(route(platform(platforms, 'venue-d'), '/currencies').sign).toBe(false);
    expect(route(platform(platforms, 'venue-d'), '/products/BTC-USD/book').sign).toBe(false);
    expect(route(platform(platforms, 'venue-a-us'), '/portfolio/positions')).toMatchObject({
      sign: true,
      signer: 'polymarket-us-ed25519',
    });
    expect(route(platform(platforms, 'venue-a-clob'), '/data/trades')).toMatchObject({
      sign: true,
      signer: 'polymarket-clob-l2',
    });
  });

  it('prefers a CDP JWT for Coinbase when JWT credentials are configured', () => {
    const platforms = createPlatforms(
      loadConfig({ ...base, COINBASE_JWT_KEY_NAME: 'organizations/x/apiKeys/y', COINBASE_JWT_PRIVATE_KEY: ec }),
    );
    expect(route(platform(platforms, 'venue-d'), '/accounts').signer).toBe('coinbase-cdp-jwt');
  });
});
