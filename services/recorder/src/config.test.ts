import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '@depthgate/service-kit';
import { thrownBy, undocumentedSettings } from '@depthgate/test-utils';
import { loadRecorderConfig, recorderEnvNames, recorderRedisTarget } from './config';

describe('recorder configuration', () => {
  it('has working defaults: the real feeds, every listed market, five-minute snapshots', () => {
    const c = loadRecorderConfig({});
    expect(c.RECORDER_PORT).toBe(7082);
    expect(c.RECORDER_HOST).toBe('127.0.0.1');
    expect(c.platforms['venue-b'].feeds.main).toBe('wss://api.elections.kalshi.com/trade-api/ws/v2');
    expect(c.platforms['venue-c'].feeds.main).toBe('wss://api.gemini.com/v2/marketdata');
    expect(c.platforms['venue-a-us'].feeds.main).toBe('wss://api.polymarket.us/v1/ws/markets');
    expect(c.platforms['venue-b'].urls).toEqual({ main: 'https://api.elections.kalshi.com/trade-api/v2' });
    expect(c.CLICKHOUSE_URL).toBe('http://127.0.0.1:7123');
    expect(c.RECORDER_SNAPSHOT_INTERVAL_MS).toBe(300_000);
    expect(c.exchanges).toEqual(['venue_b', 'venue_c', 'venue_a_us', 'venue_a_clob', 'venue_d']);
    expect(c.venues.venue_b).toMatchObject({
      tickers: [],
      prefixes: ['*'],
      series: [],
      restRate: 10,
      reconcile: true,
    });
    expect(c.venues.venue_c).toMatchObject({ restRate: 1, reconcile: true });
    // Every recorded exchange has a REST book: all but Polymarket US (whose whole books verify ours) reconciled, within
    // a tenth of the platform's documented limit.
    expect(c.RECORDER_RECONCILE_EXCHANGES).toEqual(['venue_b', 'venue_c', 'venue_a_clob', 'venue_d']);
    expect(c.RECORDER_RECONCILE_BUDGET).toBe(0.1);
    expect(
      Object.fromEntries(c.exchanges.map((e) => [e, Number(c.venues[e].reconcileReadsPerSecond.toFixed(6))])),
    ).toEqual({ venue_b: 1.9, venue_c: 0.19, venue_a_us: 1.9, venue_a_clob: 14.25, venue_d: 1 });
    expect(c.platforms['venue-b'].credentials).toEqual({});
    expect(c.platforms['venue-b'].signer).toBeUndefined();
    expect(c.platforms['venue-a-us'].signer).toBeUndefined();
  });

  it('records only what is configured once lists, prefixes or series are given', () => {
    const c = loadRecorderConfig({
      RECORDER_VENUE_B_SERIES: 'KXBTCD,KXFED',
      RECORDER_VENUE_C_TICKERS: 'BTCUSD',
      RECORDER_VENUE_A_US_PREFIXES: 'nba-,nfl-',
      RECORDER_REST_RATES: 'venue_c=0.5',
      RECORDER_RECONCILE_EXCHANGES: 'venue_c,venue_a_us',
      RECORDER_RECONCILE_BUDGET: '0.5',
    });
    expect(c.venues.venue_b.reconcile).toBe(false);
    expect(c.venues.venue_c.reconcileReadsPerSecond).toBeCloseTo(0.95, 9);
    expect(c.venues.venue_b).toMatchObject({ prefixes: [], series: ['KXBTCD', 'KXFED'] });
    expect(c.venues.venue_c).toMatchObject({ tickers: ['BTCUSD'], prefixes: [], restRate: 0.5 });
    expect(c.venues.venue_a_us).toMatchObject({ prefixes: ['nba-', 'nfl-'], reconcile: true });
  });

  it('reads feed credentials inline or from files, and refuses partial sets', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'dg-rec-config-'));
    try {
      const pem = generateKeyPairSync('rsa', { modulusLength: 2048 })
        .privateKey.export({ type: 'pkcs1', format: 'pem' })
        .toString();
      writeFileSync(path.join(dir, 'kalshi.pem'), pem);
      const ed = generateKeyPairSync('ed25519').privateKey;
      const seed = ed.export({ format: 'der', type: 'pkcs8' }).subarray(-32);
      const pub = createPublicKey(ed).export({ format: 'der', type: 'spki' }).subarray(-32);
      const c = loadRecorderConfig({
        KALSHI_ACCESS_KEY: 'key-id',
        KALSHI_PRIVATE_KEY_FILE: path.join(dir, 'kalshi.pem'),
        POLYMARKET_US_ACCESS_KEY: 'pm',
        POLYMARKET_US_SECRET_KEY: Buffer.concat([seed, pub]).toString('base64'),
      });
      expect(c.platforms['venue-b'].credentials.rsa).toEqual({ accessKey: 'key-id', privateKeyPem: pem.trim() });
      expect(c.platforms['venue-b'].signer?.name).toBe('kalshi-rsa-pss');
      expect(c.platforms['venue-a-us'].credentials.ed25519?.accessKey).toBe('pm');
      expect(() =>
        loadRecorderConfig({
          POLYMARKET_US_ACCESS_KEY: 'pm',
          POLYMARKET_US_SECRET_KEY: Buffer.alloc(64).toString('base64'),
        }),
      ).toThrow(/public half does not match/);
      expect(() => loadRecorderConfig({ KALSHI_ACCESS_KEY: 'only-the-id' })).toThrow(
        /Kalshi credentials are incomplete/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names every invalid setting', () => {
    for (const env of [
      { RECORDER_EXCHANGES: 'venue_x' },
      { RECORDER_REST_RATES: 'venue_b' },
      { RECORDER_RECONNECT_MIN_MS: '5000', RECORDER_RECONNECT_MAX_MS: '1000' },
      { RECORDER_BATCH_MAX_ROWS: '2000000' },
      { RECORDER_RECONCILE_BUDGET: '0' },
      { RECORDER_RECONCILE_BUDGET: '1.5' },
      { RECORDER_RECONCILE_BUDGET: 'a tenth' },
      { FEED_VENUE_B_URL: 'not a url' },
      { FEED_VENUE_B_URL: 'ftp://feeds.example.com/trade-api/ws/v2' },
      { FEED_VENUE_C_URL: 'wss://feeds.example.com/v2#book' },
      { CLICKHOUSE_DATABASE: 'bad-name' },
    ]) {
      const [name] = Object.keys(env);
      expect(thrownBy(() => loadRecorderConfig(env), ConfigError).issues.join('\n')).toContain(`${name}:`);
    }
  });

  it('is solo without RECORDER_REDIS_URL, and redundant with it (Sentinel as the gateway)', () => {
    const solo = loadRecorderConfig({});
    expect(recorderRedisTarget(solo)).toBeUndefined();
    expect(solo.RECORDER_LEASE_TTL_MS).toBe(5000);
    expect(solo.RECORDER_REDIS_PREFIX).toBe('dg:rec:');
    const redundant = loadRecorderConfig({
      RECORDER_REDIS_URL: 'rediss://rec:pw@ignored:1/3',
      RECORDER_REDIS_SENTINELS: 'sentinel-0.redis:26379,10.0.0.2:26380',
      RECORDER_REDIS_SENTINEL_NAME: 'depthgate',
      RECORDER_ID: 'recorder-1',
    });
    expect(redundant.RECORDER_ID).toBe('recorder-1');
    expect(recorderRedisTarget(redundant)).toEqual({
      url: 'rediss://rec:pw@ignored:1/3',
      sentinels: [
        { host: 'sentinel-0.redis', port: 26379 },
        { host: '10.0.0.2', port: 26380 },
      ],
      name: 'depthgate',
      sentinelPassword: undefined,
      sentinelTls: undefined,
      tlsCaFile: undefined,
    });
  });

  it('refuses a Redis URL of another scheme, sentinels without a URL, and a buffer shorter than a takeover', () => {
    const issues = (env: Record<string, string>) => thrownBy(() => loadRecorderConfig(env), ConfigError).issues;
    expect(issues({ RECORDER_REDIS_URL: 'http://redis:6379' })).toEqual([
      'RECORDER_REDIS_URL: expected a redis:// or rediss:// URL',
    ]);
    expect(issues({ RECORDER_REDIS_SENTINELS: 'a:1' })[0]).toMatch(
      /^RECORDER_REDIS_SENTINELS: needs RECORDER_REDIS_URL/,
    );
    expect(issues({ RECORDER_REDIS_SENTINELS: 'a' })[0]).toMatch(/^RECORDER_REDIS_SENTINELS/);
    expect(
      issues({
        RECORDER_REDIS_URL: 'redis://r:6379',
        RECORDER_LEASE_TTL_MS: '10000',
        RECORDER_STANDBY_BUFFER_MS: '20000',
      }),
    ).toEqual(['RECORDER_STANDBY_BUFFER_MS: must be at least 3 × RECORDER_LEASE_TTL_MS']);
  });

  it("refuses a stall timeout not above the keep-alive whose answer is a feed's only sign of life", () => {
    const issues = (env: Record<string, string>) => thrownBy(() => loadRecorderConfig(env), ConfigError).issues;
    // The CLOB answers our PING (every 10 s by default): a quiet market's connection hears nothing else.
    expect(issues({ RECORDER_EXCHANGES: 'venue_a_clob', RECORDER_STALL_TIMEOUT_MS: '5000' })).toEqual([
      "RECORDER_STALL_TIMEOUT_MS: 5000 ms is not longer than venue_a_clob's keep-alive interval (10000 ms), whose answer is its quiet feed's only sign of life: every quiet connection would be cut as stalled; make it longer, or RECORDER_PING_INTERVAL_MS shorter",
    ]);
    const env = {
      RECORDER_EXCHANGES: 'venue_a_clob',
      RECORDER_STALL_TIMEOUT_MS: '1500',
      RECORDER_PING_INTERVAL_MS: '500',
    };
    expect(loadRecorderConfig(env).RECORDER_STALL_TIMEOUT_MS).toBe(1500);
    // A venue's own heartbeat is not checked: the override serves a feed (a simulator) that beats faster.
    expect(
      loadRecorderConfig({ RECORDER_EXCHANGES: 'venue_b', RECORDER_STALL_TIMEOUT_MS: '1500' })
        .RECORDER_STALL_TIMEOUT_MS,
    ).toBe(1500);
  });

  it('documents every setting in docs/configuration.md', () => {
    expect(undocumentedSettings(recorderEnvNames())).toEqual([]);
  });
});
