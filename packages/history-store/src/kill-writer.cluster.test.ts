/**
 * RecorderStore.killWriter and ensureQueryEnded on the local cluster of `./dev test --cluster` (2 shards × 2 replicas of 18.16): a query
 * of a deposed recorder term (`rec-<term>-…`) running on a server other than the one we talk to is killed, with every
 * server up and with one of them down (where `KILL QUERY ON CLUSTER` alone waits out the DDL timeout and fails); a
 * query of another term is left alone. An abandoned insert still running on a server other than the one we talk to
 * is found there and ended before ensureQueryEnded returns (the shared address of a deployment may lead anywhere).
 */
import { randomUUID } from 'node:crypto';
import { testCluster, uniqueName, waitFor } from '@depthgate/test-utils';
import { HistoryStore, RecorderStore } from './index';

jest.setTimeout(240_000);

const cluster = testCluster();
const entry = cluster.node('s1r1');

/** A query that runs about `seconds` s on `url` under `queryId`; resolves with its outcome (`ok` or the error text). */
function longQuery(url: string, queryId: string, seconds = 600): Promise<string> {
  const params = new URLSearchParams({ query_id: queryId, max_block_size: '1' });
  return fetch(`${url}/?${params}`, {
    method: 'POST',
    body: `SELECT sleepEachRow(1) FROM numbers(${seconds}) FORMAT Null`,
  }).then(
    async (res) => (res.status === 200 ? 'ok' : await res.text()),
    (err: Error) => err.message,
  );
}

async function runningOn(url: string, queryId: string): Promise<boolean> {
  const res = await fetch(`${url}/`, {
    method: 'POST',
    body: `SELECT count() FROM system.processes WHERE query_id = '${queryId}'`,
  });
  return (await res.text()).trim() !== '0';
}

const store = new HistoryStore({ url: entry.url, database: uniqueName('clkill'), cluster: cluster.name });
const recorder = new RecorderStore(store);
afterAll(() => store.close());

describe('killWriter on a cluster', () => {
  it("kills a term's query on another server and leaves another term's running", async () => {
    const term = 700_000 + Math.floor(Math.random() * 100_000);
    const victim = cluster.node('s2r2');
    const ofTerm = `rec-${term}-${randomUUID()}`;
    // The same digits with one more: `rec-<term>1-` must not match `rec-<term>-`.
    const other = `rec-${term}1-${randomUUID()}`;
    const killed = longQuery(victim.url, ofTerm);
    const spared = longQuery(victim.url, other);
    await waitFor(async () => (await runningOn(victim.url, ofTerm)) && (await runningOn(victim.url, other)), {
      what: 'both queries to run',
    });
    await recorder.killWriter(term);
    expect(await runningOn(victim.url, ofTerm)).toBe(false);
    expect(await killed).toMatch(/Code: 394/); // QUERY_WAS_CANCELLED
    expect(await runningOn(victim.url, other)).toBe(true);
    await fetch(`${victim.url}/`, { method: 'POST', body: `KILL QUERY WHERE query_id = '${other}' SYNC` });
    expect(await spared).toMatch(/Code: 394/);
  });

  it('kills it while another server of the cluster is down (no wait for the DDL timeout, no failure)', async () => {
    const term = 800_000 + Math.floor(Math.random() * 100_000);
    const down = cluster.node('s2r1');
    const victim = cluster.node('s1r2');
    const ofTerm = `rec-${term}-${randomUUID()}`;
    await cluster.stopNode(down.name, { kill: true });
    try {
      const killed = longQuery(victim.url, ofTerm);
      await waitFor(() => runningOn(victim.url, ofTerm), { what: 'the query to run' });
      // Bounded below the 180 s DDL timeout that KILL QUERY ON CLUSTER alone waits for a down server.
      await recorder.killWriter(term, 60_000);
      expect(await runningOn(victim.url, ofTerm)).toBe(false);
      expect(await killed).toMatch(/Code: 394/);
    } finally {
      await cluster.startNode(down.name);
    }
  });

  it('resolves at once when no server runs a query of the term', async () => {
    const term = 900_000 + Math.floor(Math.random() * 100_000);
    const victim = cluster.node('s2r1');
    const other = `rec-${term + 1}-${randomUUID()}`;
    const spared = longQuery(victim.url, other);
    await waitFor(() => runningOn(victim.url, other), { what: 'the other query to run' });
    await recorder.killWriter(term);
    expect(await runningOn(victim.url, other)).toBe(true);
    await fetch(`${victim.url}/`, { method: 'POST', body: `KILL QUERY WHERE query_id = '${other}' SYNC` });
    expect(await spared).toMatch(/Code: 394/);
  });
});

// (A server that is down is handled by the mechanism ensureQueryEnded shares with killWriter: tested above.)
describe('ensureQueryEnded on a cluster', () => {
  it('does not return while the insert still runs on another server: it ends it there first', async () => {
    const victim = cluster.node('s2r2');
    // An insert-like query id (the writer's), on a server the entry server does not see it on.
    const id = `dg-insert-deltas-${randomUUID()}`;
    const abandoned = longQuery(victim.url, id);
    await waitFor(() => runningOn(victim.url, id), { what: 'the insert-like query to run' });
    expect(await runningOn(entry.url, id)).toBe(false);
    await recorder.ensureQueryEnded(id);
    expect(await runningOn(victim.url, id)).toBe(false);
    expect(await abandoned).toMatch(/Code: 394/); // QUERY_WAS_CANCELLED
  });
});
