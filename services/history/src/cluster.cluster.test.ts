/**
 * The spec's endpoints in cluster mode (CLICKHOUSE_CLUSTER, on the local cluster of `./dev test --cluster`) answer
 * exactly as in single-server mode on the same generated data — and still do, complete, while a shard's replica that
 * serves reads is down (the shard's other replica takes over).
 */
import request from 'supertest';
import type { ExchangeKey } from '@depthgate/auth';
import { storeOptions } from '@depthgate/history-store';
import { ClusterNodeView } from '@depthgate/history-store/testing';
import { testCluster } from '@depthgate/test-utils';
import { planGeneration, runGeneration } from '@depthgate/history-tools';
import { createHarness, type Harness } from './testing/harness';

jest.setTimeout(240_000);

const cluster = testCluster();
const entry = cluster.node('s1r1');
/** Six hours across a month boundary (two partitions). */
const FROM = Date.UTC(2026, 3, 30, 21, 0, 0);
const TO = Date.UTC(2026, 4, 1, 3, 0, 0);
const TICKERS: { exchange: ExchangeKey; ticker: string }[] = [
  { exchange: 'venue_b', ticker: 'KXBTCD-26MAY01-T95000' },
  { exchange: 'venue_b', ticker: 'KXBTCD-26MAY01-T97500' },
  { exchange: 'venue_b', ticker: 'KXFED-26JUN-T4.00' },
  { exchange: 'venue_b', ticker: 'KXINX-26MAY01-B5800' },
  { exchange: 'venue_c', ticker: 'BTCUSD' },
  { exchange: 'venue_c', ticker: 'ETHUSD' },
  { exchange: 'venue_c', ticker: 'GEMI-FEDJUN26-DN25' },
  { exchange: 'venue_a_us', ticker: 'will-bitcoin-close-above-100k-on-may-31' },
  { exchange: 'venue_a_us', ticker: 'fed-cuts-rates-in-june-2026' },
];

/** Every request compared: lists, whole ranges, windows, limits that cut, books, lower case, unknown tickers. */
function requests(): string[] {
  const iso = (ms: number) => new Date(ms).toISOString();
  const paths: string[] = [];
  for (const exchange of ['venue_b', 'venue_c', 'venue_a_us']) {
    paths.push(`/api/${exchange}/tickers`, `/api/${exchange}/tickers?prefix=kx`, `/api/${exchange}/tickers?prefix=B`);
    paths.push(`/api/${exchange}/deltas/NO-SUCH-TICKER`);
  }
  for (const { exchange, ticker } of TICKERS) {
    const base = `/api/${exchange}`;
    paths.push(
      `${base}/snapshots/${ticker}?limit=1000000`,
      `${base}/deltas/${ticker}?limit=1000000`,
      `${base}/snapshots/${ticker}?start_ts=${iso(FROM + 2 * 3_600_000 + 1234)}&limit=1`,
      `${base}/snapshots/${ticker}?start_ts=${iso(FROM + 3_600_000)}&end_ts=${iso(TO - 3_600_000)}&limit=77`,
      `${base}/deltas/${ticker}?start_ts=${iso(FROM + 2_900_000)}&end_ts=${iso(FROM + 4 * 3_600_000)}&limit=333`,
      `${base}/deltas/${ticker}?start_ts=${iso(Date.UTC(2026, 4, 1))}&limit=1000`,
      `${base}/deltas/${ticker.toLowerCase()}?limit=10`,
    );
  }
  return paths;
}

async function answers(h: Harness, key: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const path of requests()) {
    const res = await request(h.app).get(path).set('x-api-key', key).buffer(true);
    out.set(path, `${res.status} ${res.headers['content-type']}\n${res.text}`);
  }
  return out;
}

describe('the history API in cluster mode', () => {
  let single: Harness;
  let clustered: Harness;
  let expected: Map<string, string>;
  let keyCluster: string;

  beforeAll(async () => {
    const now = TO + 60_000;
    single = await createHarness({ clickhouseUrl: entry.url, now });
    clustered = await createHarness({ clickhouseUrl: entry.url, now, env: { CLICKHOUSE_CLUSTER: cluster.name } });
    const { plan } = planGeneration({
      tickers: TICKERS,
      from: FROM,
      to: TO,
      snapshotIntervalMs: 300_000,
      seed: 'cluster',
      batchRows: 20_000,
      eventsPerMinute: 30,
    });
    await runGeneration(single.ch, plan, { workers: 0, store: storeOptions(single.config) });
    await runGeneration(clustered.ch, plan, { workers: 0, store: storeOptions(clustered.config) });
    for (const node of cluster.nodes) {
      const view = new ClusterNodeView(node.url, clustered.config.CLICKHOUSE_DATABASE);
      await view.sync();
      await view.close();
    }
    expected = await answers(single, await single.key({}));
    keyCluster = await clustered.key({});
  });

  afterAll(async () => {
    await Promise.allSettled([single?.close(), clustered?.close()]);
  });

  it('holds every ticker on one shard, with both shards in use', async () => {
    const tickers: Record<string, string[]> = {};
    for (const node of cluster.nodes) {
      const view = new ClusterNodeView(node.url, clustered.config.CLICKHOUSE_DATABASE);
      tickers[node.name] = await view.localTickers('deltas');
      await view.close();
    }
    expect(tickers.s1r2).toEqual(tickers.s1r1);
    expect(tickers.s2r2).toEqual(tickers.s2r1);
    expect((tickers.s1r1?.length ?? 0) + (tickers.s2r1?.length ?? 0)).toBe(TICKERS.length);
    expect(tickers.s1r1?.length).toBeGreaterThan(0);
    expect(tickers.s2r1?.length).toBeGreaterThan(0);
  });

  it('answers every request byte for byte as in single-server mode', async () => {
    const actual = await answers(clustered, keyCluster);
    expect([...actual.keys()]).toEqual([...expected.keys()]);
    for (const [path, answer] of expected) expect([path, actual.get(path)]).toEqual([path, answer]);
    // Real answers: rows, a 404, lists.
    expect(expected.get(`/api/venue_c/deltas/BTCUSD?limit=1000000`)?.length).toBeGreaterThan(100_000);
    expect(expected.get('/api/venue_b/deltas/NO-SUCH-TICKER')).toMatch(/^404 /);
  });

  it("still answers completely while the replica serving a shard's reads is down: the other replica serves", async () => {
    const serving = cluster.node('s2r1');
    await cluster.stopNode(serving.name, { kill: true });
    try {
      const actual = await answers(clustered, keyCluster);
      for (const [path, answer] of expected) expect([path, actual.get(path)]).toEqual([path, answer]);
    } finally {
      await cluster.startNode(serving.name);
    }
  });
});
