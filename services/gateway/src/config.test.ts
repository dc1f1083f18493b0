import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '@depthgate/service-kit';
import { thrownBy, undocumentedSettings } from '@depthgate/test-utils';
import { gatewayEnvNames, loadConfig } from './config';

describe('gateway configuration', () => {
  it('has working defaults', () => {
    const config = loadConfig({});
    expect(config.REDIS_URL).toBe('redis://127.0.0.1:7379');
    expect(config.KEY_CACHE_TTL_MS).toBeLessThanOrEqual(5000);
    expect(config.TRUST_PROXY_HOPS).toBe(0);
  });

  it('rejects values outside their bounds, naming each', () => {
    expect(() =>
      loadConfig({ KEY_CACHE_TTL_MS: '6000', TRUST_PROXY_HOPS: 'true', RATE_LIMIT_DEFAULT_RPM: '0' }),
    ).toThrow(ConfigError);
    const { issues } = thrownBy(
      () => loadConfig({ KEY_CACHE_TTL_MS: '6000', TRUST_PROXY_HOPS: 'true', UPSTREAM_VENUE_B_URL: 'nope' }),
      ConfigError,
    );
    expect(issues.join('\n')).toMatch(/KEY_CACHE_TTL_MS[\s\S]*TRUST_PROXY_HOPS[\s\S]*UPSTREAM_VENUE_B_URL/);
  });

  it('parses budgets and cache routes, and refuses malformed ones', () => {
    const config = loadConfig({
      UPSTREAM_BUDGETS: 'venue-b=100/50,venue-d=0',
      CACHE_ROUTES: 'venue-b:/markets/*/orderbook=250',
    });
    expect(config.budgets['venue-b']).toEqual({ perSecond: 100, burst: 50 });
    expect(config.budgets['venue-d']).toBeNull();
    expect(config.budgets['venue-c']).toEqual({ perSecond: 1.9, burst: 6 });
    expect(config.cacheRules).toEqual([{ platform: 'venue-b', pattern: '/markets/*/orderbook', ttlMs: 250 }]);
    expect(() => loadConfig({ UPSTREAM_BUDGETS: 'venue-x=1' })).toThrow(/UPSTREAM_BUDGETS/);
    expect(() => loadConfig({ CACHE_ROUTES: 'venue-b:markets=1' })).toThrow(/CACHE_ROUTES/);
    expect(() => loadConfig({ DISABLED_PLATFORMS: 'venue-q' })).toThrow(/DISABLED_PLATFORMS/);
  });

  it('host routing is off unless GATEWAY_BASE_DOMAIN names a domain; the POST body limit has a default', () => {
    expect(loadConfig({}).baseDomain).toBeUndefined();
    expect(loadConfig({}).GATEWAY_MAX_BODY_BYTES).toBe(256 * 1024);
    expect(loadConfig({ GATEWAY_BASE_DOMAIN: 'GW.Example.com.' }).baseDomain).toBe('gw.example.com');
    expect(loadConfig({ GATEWAY_BASE_DOMAIN: 'localhost' }).baseDomain).toBe('localhost');
    for (const bad of ['*.example.com', 'gw.example.com:7080', 'http://gw', '-gw.example'])
      expect(() => loadConfig({ GATEWAY_BASE_DOMAIN: bad })).toThrow(/GATEWAY_BASE_DOMAIN/);
    expect(() => loadConfig({ GATEWAY_MAX_BODY_BYTES: '0' })).toThrow(/GATEWAY_MAX_BODY_BYTES/);
  });

  it('reconciliation takes a tenth of each platform’s budget unless told, a fraction above 0 and at most 1', () => {
    expect(loadConfig({}).WS_RECONCILE_BUDGET).toBe(0.1);
    expect(loadConfig({ WS_RECONCILE_BUDGET: '0.25' }).WS_RECONCILE_BUDGET).toBe(0.25);
    for (const bad of ['0', '1.5', 'a tenth'])
      expect(() => loadConfig({ WS_RECONCILE_BUDGET: bad })).toThrow(/WS_RECONCILE_BUDGET/);
  });

  it('refuses at start an upstream URL that is not a base HTTP URL, and a feed URL the WebSocket library refuses (every request or connection attempt would fail or go elsewhere)', () => {
    const cases: [variable: string, refused: [string, string][], taken: string[]][] = [
      [
        'UPSTREAM_VENUE_C_URL',
        [
          ['ftp://api.example.com', 'not an HTTP URL'],
          ['wss://api.example.com', 'not an HTTP URL'],
          ['https://api.example.com/v1?token=x', 'no \\?query or #fragment'],
          ['https://api.example.com/v1#x', 'no \\?query or #fragment'],
        ],
        ['http://127.0.0.1:9000', 'https://api.example.com/v1'],
      ],
      [
        'FEED_VENUE_C_URL',
        [
          ['ftp://feeds.example.com/v2', 'not a WebSocket URL'],
          ['wss://feeds.example.com/v2#book', 'no #fragment'],
        ],
        // What it connects to: ws and wss, and http and https, which it takes as those.
        ['ws://127.0.0.1:9000/v2', 'wss://feeds.example.com/v2', 'http://127.0.0.1:9000/v2'],
      ],
    ];
    for (const [variable, refused, taken] of cases) {
      for (const [url, problem] of refused) {
        const { issues } = thrownBy(() => loadConfig({ [variable]: url }), ConfigError);
        expect(issues).toEqual([expect.stringMatching(new RegExp(`^${variable}: .*${problem}`))]);
      }
      for (const url of taken) {
        const venueC = loadConfig({ [variable]: url }).platforms['venue-c'];
        expect(variable.startsWith('FEED_') ? venueC.feeds.main : venueC.urls.main).toBe(url);
      }
    }
  });

  it('reads secrets from *_FILE, and refuses partial or doubly given credentials', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gw-'));
    writeFileSync(path.join(dir, 'secret'), 'c2VjcmV0\n');
    writeFileSync(path.join(dir, 'pass'), 'pp');
    const config = loadConfig({
      COINBASE_API_KEY: 'k',
      COINBASE_API_SECRET_FILE: path.join(dir, 'secret'),
      COINBASE_API_PASSPHRASE_FILE: path.join(dir, 'pass'),
    });
    expect(config.platforms['venue-d'].credentials.hmac).toEqual({ key: 'k', secret: 'c2VjcmV0', passphrase: 'pp' });
    expect(config.platforms['venue-d'].signer?.name).toBe('coinbase-exchange-hmac');
    expect(() => loadConfig({ COINBASE_API_KEY: 'k' })).toThrow(
      /Coinbase credentials are incomplete: missing COINBASE_API_SECRET, COINBASE_API_PASSPHRASE/,
    );
    expect(() => loadConfig({ KALSHI_PRIVATE_KEY: 'x', KALSHI_PRIVATE_KEY_FILE: '/x' })).toThrow(
      /either KALSHI_PRIVATE_KEY or KALSHI_PRIVATE_KEY_FILE/,
    );
    expect(() => loadConfig({ KALSHI_ACCESS_KEY: 'k', KALSHI_PRIVATE_KEY_FILE: path.join(dir, 'missing') })).toThrow(
      /cannot read/,
    );
  });

  it('documents every setting in docs/configuration.md', () => {
    expect(undocumentedSettings(gatewayEnvNames())).toEqual([]);
  });
});
