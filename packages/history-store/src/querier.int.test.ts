/**
 * The querier against the real ClickHouse of `./dev test`: the gate and the scope's budget, the server's own
 * max_execution_time, cancellation (the query is killed), and the tag a query carries. The history API's failure
 * tests (services/history) cover the same paths end to end through HTTP.
 */
import { testClickHouseUrl, uniqueName, waitFor } from '@depthgate/test-utils';
import { sql } from './literals';
import { Querier, type QueryObserver, type QueryOutcome } from './querier';
import { GateClosedError, QueryGate } from './query-gate';
import { QueryAbortedError } from './scope';
import { createTestDatabase, type TestDatabase } from './testing';

const BIG = 'KXBIG-26JUN01-T1';
const ROWS = 300_000;

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ url: testClickHouseUrl(), database: uniqueName('qry') });
  await db.fillDeltas({ exchange: 'venue_b', ticker: BIG, fromTs: 1_000_000, stepMs: 10, rows: ROWS });
});

afterAll(async () => {
  await db.drop();
  await db.close();
});

/** An observer that keeps what it is told. */
function recording() {
  const seen = { waiting: 0, waits: 0, ended: [] as [string, QueryOutcome][] };
  const observer: QueryObserver = {
    waiting: (delta) => void (seen.waiting += delta),
    waited: () => void seen.waits++,
    ended: (name, outcome) => void seen.ended.push([name, outcome]),
  };
  return { seen, observer };
}

describe('the querier', () => {
  it('a scope waiting for a place in the gate keeps its time budget: GateClosedError, nothing sent', async () => {
    const gate = new QueryGate(1);
    const { seen, observer } = recording();
    const q = new Querier(db.store, { gate, observer });
    const held = await gate.acquire(new AbortController().signal);
    const scope = db.store.scope(200);
    const started = Date.now();
    try {
      await expect(q.stream(scope, 'window', sql`SELECT 1 FORMAT RowBinary`, () => undefined)).rejects.toBeInstanceOf(
        GateClosedError,
      );
      expect(scope.reason).toBe('timeout');
      expect(Date.now() - started).toBeGreaterThanOrEqual(150);
      expect(gate.waiting).toBe(0);
      expect(seen.waiting).toBe(0);
      expect(seen.ended).toEqual([['window', 'timeout']]);
    } finally {
      scope.dispose();
      held();
    }
    // With the place free again, the same querier answers.
    const scope2 = db.store.scope(5000);
    const chunks: Buffer[] = [];
    await q.stream(scope2, 'window', sql`SELECT toUInt8(7) FORMAT RowBinary`, (c) => void chunks.push(c));
    scope2.dispose();
    expect(Buffer.concat(chunks)).toEqual(Buffer.from([7]));
    expect(seen.ended).toEqual([
      ['window', 'timeout'],
      ['window', 'ok'],
    ]);
  });

  it('ClickHouse’s own max_execution_time ends a query once the answer has started, recognised as a timeout', async () => {
    const { seen, observer } = recording();
    const q = new Querier(db.store, { observer });
    // The answer has started: the scope no longer times the query itself; the server's limit (1 s) does.
    const scope = db.store.scope(1000, { answerStarted: () => true });
    const started = Date.now();
    try {
      await expect(
        q.stream(scope, 'burn', sql`SELECT sum(sipHash64(number)) FROM system.numbers FORMAT TabSeparated`, () => {}),
      ).rejects.toThrow(/159|TIMEOUT_EXCEEDED|Timeout exceeded/i);
    } finally {
      scope.dispose();
    }
    expect(scope.reason).toBeUndefined();
    expect(seen.ended).toEqual([['burn', 'timeout']]);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('a cancelled scope ends its running query on the server; the query id carries its name', async () => {
    const { seen, observer } = recording();
    const q = new Querier(db.store, { observer });
    const scope = db.store.scope(60_000);
    let firstChunk!: () => void;
    const gotChunk = new Promise<void>((r) => (firstChunk = r));
    // A consumer that stops reading after the first chunk, until the scope is aborted: the query waits on its socket.
    const reading = q.stream(
      scope,
      'window',
      sql`SELECT * FROM ${q.db}.deltas ORDER BY ts FORMAT RowBinary`,
      () =>
        new Promise<void>((resolve) => {
          firstChunk();
          if (scope.signal.aborted) resolve();
          else scope.signal.addEventListener('abort', () => resolve(), { once: true });
        }),
    );
    reading.catch(() => undefined);
    await gotChunk;
    const running = await db.runningQueries();
    expect(running).toHaveLength(1);
    expect(running[0]).toMatch(/^dg-window-[0-9a-f-]{36}$/);
    scope.abort('cancelled');
    // Whatever was still buffered, a cancelled read never passes for a complete one.
    await expect(reading).rejects.toBeInstanceOf(QueryAbortedError);
    scope.dispose();
    await waitFor(async () => (await db.runningQueries()).length === 0, {
      timeoutMs: 15_000,
      what: 'the query to be gone from system.processes',
    });
    expect(seen.ended).toEqual([['window', 'cancelled']]);
  });
});
