import type { ExchangeKey } from '@depthgate/platforms';
import { Registry, createLogger } from '@depthgate/service-kit';
import { BID } from '@depthgate/feeds';
import type { RowSink } from '../rows';
import { LogCapture } from '../testing/harness';
import { ListSink } from '../testing/support';
import { Controller, LIVE_SETTLE_MS, type Clock } from './controller';
import { MemoryOwnership, UNHELD_KEPT_MS } from './ownership';
import { RoutingSink } from './routing-sink';
import { StandbyBuffer } from './standby-buffer';
import type { ControlBuffer, ControlLease, ControlSplicePoint, ControlStore, HandoverRow, LandedEnd } from './pieces';

const EX = 'venue_b' as ExchangeKey;
const TTL = 5000;
const logger = createLogger({ name: 'controller-test', level: 'silent' });

/** Every call of the fakes, in order. */
type Call = [string, ...unknown[]];

function fakes(options: {
  term: number;
  alive?: number[];
  landed?: Record<string, LandedEnd>;
  /** The landed books' digests (a receive clock); without: the store has no landedDigest (a venue clock). */
  digests?: Record<string, string>;
  /** Tickers whose buffer no longer reaches back to S (their splice writes a `handover` gap). */
  beyondWindow?: readonly string[];
}) {
  const calls: Call[] = [];
  const alive = new Set(options.alive ?? []);
  let t = 0;
  const clock: Clock = {
    monotonic: () => t,
    wall: () => 1_700_000_000_000 + t,
    sleep: (ms) => {
      calls.push(['sleep', ms]);
      t += ms;
      return new Promise((resolve) => setImmediate(resolve));
    },
  };
  const deposed: Array<(reason: string) => void> = [];
  const lease: ControlLease = {
    term: options.term,
    canInsert: () => true,
    alive: (term) => Promise.resolve(alive.has(term)),
    on: (_event, listener) => deposed.push(listener),
    stop: () => Promise.resolve(),
  };
  const handovers: HandoverRow[] = [];
  const store: ControlStore = {
    landedEnds: (_exchange, tickers) => {
      calls.push(['landedEnds', [...tickers]]);
      const out = new Map<string, LandedEnd>();
      for (const ticker of tickers) {
        const end = options.landed?.[ticker];
        if (end) out.set(ticker, end);
      }
      return Promise.resolve(out);
    },
    killWriter: (term) => {
      calls.push(['killWriter', term]);
      return Promise.resolve();
    },
    insertHandovers: (rows) => {
      calls.push(['insertHandovers', rows.map((r) => r.ticker)]);
      handovers.push(...rows);
      return Promise.resolve();
    },
    handoversOf: (term) => Promise.resolve(handovers.filter((r) => r.fromTerm === term || r.toTerm === term)),
    ...(options.digests === undefined
      ? {}
      : {
          landedDigest: (_exchange: ExchangeKey, ticker: string, at: number) => {
            calls.push(['landedDigest', ticker, at]);
            return Promise.resolve(options.digests?.[ticker]);
          },
        }),
  };
  let drainedRelease: (() => void) | undefined;
  let holdDrained = false;
  let troubleForMs: number | undefined;
  const writer = {
    drained: (timeoutMs?: number) => {
      calls.push(['drained']);
      drainTimeouts.push(timeoutMs);
      if (!holdDrained) return Promise.resolve();
      return new Promise<void>((resolve) => {
        drainedRelease = () => {
          calls.push(['drained resolved']);
          resolve();
        };
      });
    },
    // The writer's own clock, not the controller's (the recorder's writer runs on epoch ms).
    writeTroubleForMs: () => troubleForMs,
  };
  const drainTimeouts: Array<number | undefined> = [];
  const spliced: ControlSplicePoint[] = [];
  const buffer: ControlBuffer = {
    splice: (_exchange, ticker, point) => {
      calls.push(['splice', ticker, point.s]);
      spliced.push(point);
      const beyondWindow = options.beyondWindow?.includes(ticker) ?? false;
      return {
        continuous: !beyondWindow,
        beyondWindow,
        diverged: false,
        completed: 0,
        lastTs: point.s,
        sequence: point.sequence + 10,
        rows: 3,
      };
    },
  };
  const owned = new Map<string, boolean>();
  const routing = {
    setOwner: (_exchange: ExchangeKey, ticker: string, isOwner: boolean) => {
      calls.push(['setOwner', ticker, isOwner]);
      owned.set(ticker, isOwner);
    },
    // What an owned ticker produced: none here (a release falls back to what landed).
    endOf: (): LandedEnd | undefined => undefined,
    forget: (_exchange: ExchangeKey, ticker: string) => {
      calls.push(['forget', ticker]);
    },
  };
  const live = new Set<string>();
  const tickers = {
    live: (_exchange: ExchangeKey, ticker: string) => live.has(ticker),
    bookDigest: () => undefined,
    resumeSequence: (_exchange: ExchangeKey, ticker: string, sequence: number) => {
      calls.push(['resumeSequence', ticker, sequence]);
    },
    writeOwnGap: (_exchange: ExchangeKey, ticker: string) => {
      calls.push(['writeOwnGap', ticker]);
    },
  };
  return {
    calls,
    alive,
    clock,
    lease,
    store,
    writer,
    buffer,
    routing,
    tickers,
    owned,
    live,
    handovers,
    spliced,
    deposed,
    advance: (ms: number) => {
      t += ms;
    },
    holdDrained: () => {
      holdDrained = true;
    },
    releaseDrained: () => drainedRelease?.(),
    setTroubleFor: (ms: number | undefined) => {
      troubleForMs = ms;
    },
    drainTimeouts,
  };
}

function controller(
  f: ReturnType<typeof fakes>,
  ownership: MemoryOwnership,
  registry?: Registry,
  exchanges: ExchangeKey[] = [EX],
  log = logger,
) {
  return new Controller({
    lease: f.lease,
    ownership,
    store: f.store,
    writer: f.writer,
    buffer: f.buffer,
    routing: f.routing,
    tickers: f.tickers,
    sink: {} as RowSink,
    exchanges,
    ttlMs: TTL,
    offerTimeoutMs: 1000,
    writeFailureMs: 60_000,
    logger: log,
    clock: f.clock,
    registry,
  });
}

const names = (calls: Call[]) => calls.map((c) => c[0]);
const LANDED: LandedEnd = { lastTs: 5000, sequence: 5_000_003, lastTradeTs: 4990, deltasAtLast: [] };

/** Term 4 stands by for X (on EX) and Y (on EX2), both owned by term 3, alive for now. */
async function deadTermOnTwoExchanges() {
  const EX2 = 'venue_d' as ExchangeKey;
  const ownership = new MemoryOwnership();
  await ownership.swap(EX, ['X'], null, { term: 3, state: 'owned' });
  await ownership.swap(EX2, ['Y'], null, { term: 3, state: 'owned' });
  const f = fakes({ term: 4, alive: [3], landed: { X: LANDED, Y: LANDED } });
  const c = controller(f, ownership, undefined, [EX, EX2]);
  await c.admit(EX, ['X']);
  await c.admit(EX2, ['Y']);
  return { f, c, EX2 };
}

/** Admits X and Y (owned by term 3) and makes them live; then term 3 dies and the next poll takes them over. */
async function liveOnXYThenOwnerDies(c: Controller, f: ReturnType<typeof fakes>): Promise<void> {
  await c.admit(EX, ['X', 'Y']);
  f.live.add('X');
  f.live.add('Y');
  await c.poll();
  f.alive.delete(3);
  f.advance(TTL + 2000);
  await c.poll();
}

describe('Controller takeover (decision 1)', () => {
  it('takes a dead owner’s ticker: TTL wait, kill, landed end, handovers row, splice, routing — in that order', async () => {
    const ownership = new MemoryOwnership();
    await ownership.swap(EX, ['X'], null, { term: 3, state: 'owned' });
    const f = fakes({ term: 4, alive: [3], landed: { X: LANDED } });
    const registry = new Registry();
    const c = controller(f, ownership, registry);
    expect(await c.admit(EX, ['X'])).toEqual(new Map([['X', 'standby']]));
    expect(f.owned.get('X')).toBe(false);

    // Owner alive: nothing happens, even when live.
    f.live.add('X');
    f.calls.length = 0;
    await c.poll();
    expect(names(f.calls)).toEqual([]);

    // Owner dead, but our book only just became live: its buffer may not reach back to the dead owner's landed end
    // (a restarted recorder would write a gap where a longer-live peer has the rows): not yet.
    f.alive.delete(3);
    await c.poll();
    expect(names(f.calls)).toEqual([]);
    // Live for a lease TTL and two polls: it reaches back.
    f.advance(TTL + 2000);
    await c.poll();
    expect(f.calls).toEqual([
      ['sleep', TTL],
      ['killWriter', 3],
      ['landedEnds', ['X']],
      ['insertHandovers', ['X']],
      ['splice', 'X', 5001],
      ['setOwner', 'X', true],
      ['resumeSequence', 'X', 5_000_013],
    ]);
    expect(f.handovers).toEqual([
      { exchange: EX, ticker: 'X', ts: 5001, fromTerm: 3, toTerm: 4, kind: 'takeover', detectedAt: expect.any(Number) },
    ]);
    expect(f.spliced[0]).toMatchObject({ s: 5001, sequence: 5_000_003, lastTradeTs: 4990 });
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'owned' });
    expect(c.role(EX, 'X')).toBe('owner');
    const metrics = await registry.metrics();
    expect(metrics).toContain('recorder_handovers_total{kind="takeover",result="taken"} 1');
    expect(metrics).toContain('recorder_role{exchange="venue_b",role="owner"} 1');
    expect(metrics).toContain('recorder_takeover_seconds_count{kind="takeover"} 1');
  });

  it('warns when the standby buffer no longer reached back to S (handover gaps), with how far back it had to reach', async () => {
    const ownership = new MemoryOwnership();
    await ownership.swap(EX, ['X', 'Y'], null, { term: 3, state: 'owned' });
    const f = fakes({ term: 4, alive: [3], landed: { X: LANDED, Y: LANDED }, beyondWindow: ['Y'] });
    const logs = new LogCapture();
    const c = controller(
      f,
      ownership,
      undefined,
      [EX],
      createLogger({ name: 'controller-test', level: 'info', destination: logs }),
    );
    await liveOnXYThenOwnerDies(c, f);
    expect(c.role(EX, 'Y')).toBe('owner');
    const lines = logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const took = lines.find((l) => l.msg === 'took tickers over');
    const warned = lines.filter((l) => l.level === 'warn');
    expect(took).toMatchObject({ exchange: EX, tickers: 2, kind: 'takeover' });
    expect(warned).toEqual([
      expect.objectContaining({
        exchange: EX,
        tickers: 1,
        kind: 'takeover',
        reachMs: took?.reachMs,
        msg: expect.stringContaining('RECORDER_STANDBY_BUFFER_MS'),
      }),
    ]);
    // From S (the landed end + 1) to when the ends were read, on the wall clock.
    expect(took?.reachMs).toBe((f.handovers[0]?.detectedAt as number) - (LANDED.lastTs + 1));
  });

  it('splices a dead owner’s ticker on a receive clock at its landed book’s digest', async () => {
    const ownership = new MemoryOwnership();
    await ownership.swap(EX, ['X', 'Y'], null, { term: 3, state: 'owned' });
    // Y's landed book is not known (a gap after its snapshot): no digest, the split is by time.
    const f = fakes({ term: 4, alive: [3], landed: { X: LANDED, Y: LANDED }, digests: { X: 'digest-of-x' } });
    const c = controller(f, ownership);
    await liveOnXYThenOwnerDies(c, f);
    expect(f.calls).toContainEqual(['landedDigest', 'X', LANDED.lastTs]);
    const point = (ticker: string) =>
      f.spliced[f.calls.filter((k) => k[0] === 'splice').findIndex((k) => k[1] === ticker)];
    expect(point('X')).toMatchObject({ s: 5001, digest: 'digest-of-x' });
    expect(point('Y')).toMatchObject({ s: 5001 });
    expect(point('Y')).not.toHaveProperty('digest');
  });

  it('waits the TTL and kills a dead term once, however many exchanges it owned tickers of', async () => {
    const { f, c, EX2 } = await deadTermOnTwoExchanges();
    f.live.add('X').add('Y');
    await c.poll(); // live from now
    f.alive.delete(3);
    f.advance(TTL + 2000);
    f.calls.length = 0;
    await c.poll();
    expect(f.calls.filter((call) => call[0] === 'sleep' || call[0] === 'killWriter')).toEqual([
      ['sleep', TTL],
      ['killWriter', 3],
    ]);
    expect(f.handovers.map((h) => [h.ticker, h.kind, h.fromTerm])).toEqual([
      ['X', 'takeover', 3],
      ['Y', 'takeover', 3],
    ]);
    expect([c.role(EX, 'X'), c.role(EX2, 'Y')]).toEqual(['owner', 'owner']);
  });

  it('forgets an ended dead term once no ticker names it any more, not before (no second wait and kill)', async () => {
    const { f, c, EX2 } = await deadTermOnTwoExchanges();
    const ended = (c as unknown as { deadTermsEnded: Map<number, unknown> }).deadTermsEnded;
    f.live.add('X'); // Y's book is not live yet: it is not taken with X
    await c.poll();
    f.alive.delete(3);
    f.advance(TTL + 2000);
    await c.poll();
    expect([c.role(EX, 'X'), c.role(EX2, 'Y')]).toEqual(['owner', 'standby']);
    await c.poll(); // term 3 still owns Y: kept
    expect([...ended.keys()]).toEqual([3]);
    f.live.add('Y');
    await c.poll();
    f.advance(TTL + 2000);
    f.calls.length = 0;
    await c.poll();
    expect(c.role(EX2, 'Y')).toBe('owner');
    expect(f.calls.filter((call) => call[0] === 'sleep' || call[0] === 'killWriter')).toEqual([]);
    await c.poll(); // nothing names term 3 any more
    expect(ended.size).toBe(0);
  });

  it('takes a released ticker without waiting or killing, as a `release`', async () => {
    const ownership = new MemoryOwnership();
    await ownership.swap(EX, ['X', 'Y'], null, { term: 3, state: 'released' });
    const f = fakes({ term: 4, alive: [3], landed: { X: LANDED } });
    const c = controller(f, ownership);
    await c.admit(EX, ['X', 'Y']);
    f.live.add('X'); // not live on Y: Y is not taken
    f.calls.length = 0;
    await c.poll();
    expect(names(f.calls)).toEqual(['landedEnds', 'insertHandovers', 'splice', 'setOwner', 'resumeSequence']);
    expect(f.handovers.map((h) => [h.ticker, h.kind, h.fromTerm])).toEqual([['X', 'release', 3]]);
    expect(Object.fromEntries(await ownership.owners(EX))).toEqual({
      X: { term: 4, state: 'owned' },
      Y: { term: 3, state: 'released' },
    });
  });

  it('routes nothing to the writer when the handovers row cannot be written, and retries from the same owner', async () => {
    const ownership = new MemoryOwnership();
    await ownership.swap(EX, ['X'], null, { term: 3, state: 'released' });
    const f = fakes({ term: 4, alive: [3], landed: { X: LANDED } });
    const insert = f.store.insertHandovers;
    let fail = true;
    f.store.insertHandovers = (rows) => (fail ? Promise.reject(new Error('ClickHouse away')) : insert(rows));
    const c = controller(f, ownership);
    await c.admit(EX, ['X']);
    f.live.add('X');
    f.calls.length = 0;
    await c.poll();
    expect(names(f.calls)).toEqual(['landedEnds']);
    expect(f.owned.get('X')).toBe(false);
    expect(c.role(EX, 'X')).toBe('standby');
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'splicing' });
    fail = false;
    await c.poll();
    expect(f.handovers.map((h) => [h.kind, h.fromTerm, h.toTerm])).toEqual([['release', 3, 4]]);
    expect(f.owned.get('X')).toBe(true);
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'owned' });
  });

  it('lets exactly one of two standbys take a dead owner’s ticker', async () => {
    const ownership = new MemoryOwnership();
    await ownership.swap(EX, ['X'], null, { term: 3, state: 'owned' });
    const a = fakes({ term: 4, alive: [3, 5], landed: { X: LANDED } });
    const b = fakes({ term: 5, alive: [3, 4], landed: { X: LANDED } });
    const ca = controller(a, ownership);
    const cb = controller(b, ownership);
    await ca.admit(EX, ['X']);
    await cb.admit(EX, ['X']);
    a.alive.delete(3);
    b.alive.delete(3);
    a.live.add('X');
    b.live.add('X');
    await Promise.all([ca.poll(), cb.poll()]); // live from now
    a.advance(TTL + 2000);
    b.advance(TTL + 2000);
    await Promise.all([ca.poll(), cb.poll()]);
    const roles = [ca.role(EX, 'X'), cb.role(EX, 'X')].sort();
    expect(roles).toEqual(['owner', 'standby']);
    expect(a.handovers.length + b.handovers.length).toBe(1);
    expect(
      names(a.calls).filter((n) => n === 'splice').length + names(b.calls).filter((n) => n === 'splice').length,
    ).toBe(1);
  });
});

describe('Controller start', () => {
  it('owns tickers nobody owns, stands by for a live owner, and takes a dead term’s ticker no peer can take', async () => {
    const ownership = new MemoryOwnership();
    await ownership.swap(EX, ['B'], null, { term: 2, state: 'owned' });
    await ownership.swap(EX, ['C'], null, { term: 3, state: 'owned' });
    const f = fakes({ term: 4, alive: [2], landed: { C: LANDED } });
    const c = controller(f, ownership);
    const roles = await c.admit(EX, ['A', 'B', 'C']);
    expect(Object.fromEntries(roles)).toEqual({ A: 'owner', B: 'standby', C: 'owner' });
    expect(f.calls.filter((call) => call[0] !== 'setOwner')).toEqual([
      ['sleep', TTL],
      ['killWriter', 3],
      ['landedEnds', ['C']],
      ['insertHandovers', ['C']],
    ]);
    expect(f.handovers[0]).toMatchObject({ ticker: 'C', ts: 5001, fromTerm: 3, toTerm: 4, kind: 'takeover' });
    expect(Object.fromEntries(f.owned)).toEqual({ A: true, B: false, C: true });
    expect(Object.fromEntries(await ownership.owners(EX))).toEqual({
      A: { term: 4, state: 'owned' },
      B: { term: 2, state: 'owned' },
      C: { term: 4, state: 'owned' },
    });
  });

  it('gives a dead term’s ticker back when the kill fails at the start, and takes it over later', async () => {
    const ownership = new MemoryOwnership();
    await ownership.swap(EX, ['C'], null, { term: 3, state: 'owned' });
    const f = fakes({ term: 4, landed: { C: LANDED } });
    const kill = f.store.killWriter;
    let fail = true;
    f.store.killWriter = (term) => (fail ? Promise.reject(new Error('ClickHouse away')) : kill(term));
    const c = controller(f, ownership);
    expect((await c.admit(EX, ['C'])).get('C')).toBe('standby');
    expect(f.owned.get('C')).toBe(false);
    expect((await ownership.owners(EX)).get('C')).toEqual({ term: 3, state: 'owned' });
    fail = false;
    f.live.add('C');
    await c.poll(); // live from now
    f.advance(TTL + 2000);
    f.calls.length = 0;
    await c.poll();
    expect(names(f.calls)).toEqual([
      'sleep',
      'killWriter',
      'landedEnds',
      'insertHandovers',
      'splice',
      'setOwner',
      'resumeSequence',
    ]);
    expect(c.role(EX, 'C')).toBe('owner');
  });

  it('resolves its own old term from the spool: claims what no peer can take, and returns the term’s handovers', async () => {
    const ownership = new MemoryOwnership();
    await ownership.swap(EX, ['X', 'Y'], null, { term: 3, state: 'owned' });
    const f = fakes({ term: 7 });
    f.handovers.push({ exchange: EX, ticker: 'Z', ts: 10, fromTerm: 3, toTerm: 5, kind: 'release', detectedAt: 1 });
    const c = controller(f, ownership);
    const rows = await c.resolveTerm(3);
    expect(rows.map((r) => r.ticker)).toEqual(['Z']);
    expect(f.calls).toEqual([
      ['sleep', TTL],
      ['killWriter', 3],
      ['setOwner', 'X', true],
      ['setOwner', 'Y', true],
    ]);
    expect(Object.fromEntries(await ownership.owners(EX))).toEqual({
      X: { term: 7, state: 'owned' },
      Y: { term: 7, state: 'owned' },
    });
    expect((await c.admit(EX, ['X'])).get('X')).toBe('owner');
  });

  it('is ready once the spool is replayed and it is live on 99 % of its tickers', async () => {
    const ownership = new MemoryOwnership();
    const f = fakes({ term: 1 });
    const c = controller(f, ownership);
    const many = Array.from({ length: 100 }, (_, i) => `T${i}`);
    await c.admit(EX, many);
    for (const t of many.slice(0, 99)) f.live.add(t);
    expect(c.ready()).toBe(false);
    c.spoolReplayed();
    // Live, but not yet in the live set peers read (a peer's release would not come to it).
    expect(c.ready()).toBe(false);
    await c.poll();
    // Live for less than the settle time: not in the live set yet (a release could split inside its first ms).
    expect(c.ready()).toBe(false);
    f.advance(LIVE_SETTLE_MS - 1);
    await c.poll();
    expect(c.ready()).toBe(false);
    f.advance(1);
    await c.poll();
    expect(c.ready()).toBe(true);
    f.live.delete('T0');
    expect(c.ready()).toBe(false);
    f.advance(120_000);
    expect(c.ready()).toBe(true);
  });

  it('reports a deposed lease as fatal', () => {
    const f = fakes({ term: 1 });
    const reasons: string[] = [];
    new Controller({ ...optionsOf(f), onFatal: (r) => reasons.push(r) });
    for (const listener of f.deposed) listener('deadline');
    expect(reasons).toEqual(['lease deadline']);
  });
});

function optionsOf(f: ReturnType<typeof fakes>) {
  return {
    lease: f.lease,
    ownership: new MemoryOwnership(),
    store: f.store,
    writer: f.writer,
    buffer: f.buffer,
    routing: f.routing,
    tickers: f.tickers,
    sink: {} as RowSink,
    exchanges: [EX],
    ttlMs: TTL,
    offerTimeoutMs: 1000,
    writeFailureMs: 60_000,
    logger,
    clock: f.clock,
  };
}

describe('Controller forget (a ticker the recorder stopped recording)', () => {
  it('releases an owned ticker the venue dropped, forgets it and takes it out of the live set; a standby one too', async () => {
    const ownership = new MemoryOwnership();
    await ownership.swap(EX, ['S'], null, { term: 5, state: 'owned' });
    const f = fakes({ term: 4, alive: [5] });
    const c = controller(f, ownership);
    await c.admit(EX, ['X', 'Y', 'S']);
    expect([c.role(EX, 'X'), c.role(EX, 'S')]).toEqual(['owner', 'standby']);
    f.live.add('X').add('Y').add('S');
    await c.poll();
    f.advance(LIVE_SETTLE_MS);
    await c.poll(); // published live
    expect((await ownership.liveSets(EX)).get(4)).toEqual(new Set(['X', 'Y', 'S']));
    f.live.delete('X');
    f.live.delete('S');
    c.forget(EX, 'X');
    c.forget(EX, 'S');
    f.calls.length = 0;
    await c.poll();
    // As a stop releases: routing off, the writer drained, then the state.
    expect(f.calls.slice(0, 2)).toEqual([['setOwner', 'X', false], ['drained']]);
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'released' });
    expect((await ownership.owners(EX)).get('Y')).toEqual({ term: 4, state: 'owned' });
    expect([c.role(EX, 'X'), c.role(EX, 'S'), c.role(EX, 'Y')]).toEqual([undefined, undefined, 'owner']);
    expect((await ownership.liveSets(EX)).get(4)).toEqual(new Set(['Y']));
    // The market comes back: admitted afresh, ours again (Redis still has it as released by us: owned back in the
    // admit itself, so a peer's delete of an entry nobody held cannot come between).
    expect((await c.admit(EX, ['X'])).get('X')).toBe('owner');
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'owned' });
    await c.poll();
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'owned' });
  });

  it('a ticker it released, admitted again after its entry was deleted or claimed: owner from no owner, or standby', async () => {
    const ownership = new MemoryOwnership();
    const f = fakes({ term: 4, alive: [5] });
    const c = controller(f, ownership);
    await c.admit(EX, ['X', 'Z']);
    c.forget(EX, 'X');
    c.forget(EX, 'Z');
    await c.poll();
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'released' });
    // The admit reads the entries; then X is deleted (a peer's dropUnheld) and Z claimed (a peer's takeover) before
    // it swaps them back.
    const owners = ownership.owners.bind(ownership);
    ownership.owners = async (exchange) => {
      const read = await owners(exchange);
      ownership.owners = owners;
      await ownership.swap(EX, ['X'], { term: 4, state: 'released' }, null);
      await ownership.swap(EX, ['Z'], { term: 4, state: 'released' }, { term: 5, state: 'splicing' });
      return read;
    };
    const roles = await c.admit(EX, ['X', 'Z']);
    expect([roles.get('X'), roles.get('Z')]).toEqual(['owner', 'standby']);
    expect(Object.fromEntries(await ownership.owners(EX))).toEqual({
      X: { term: 4, state: 'owned' },
      Z: { term: 5, state: 'splicing' },
    });
  });

  it('deletes the owner entry of a released ticker nobody holds for an hour; one a peer has live stays', async () => {
    const ownership = new MemoryOwnership();
    const f = fakes({ term: 4, alive: [5] });
    const c = controller(f, ownership);
    await c.admit(EX, ['X', 'P']);
    f.live.add('X').add('P');
    await c.poll();
    f.advance(LIVE_SETTLE_MS);
    await c.poll();
    // The venue drops both; the live peer 5 still has P live (it may take it), nobody has X.
    await ownership.setLive(EX, 5, ['P'], []);
    f.live.delete('X');
    f.live.delete('P');
    c.forget(EX, 'X');
    c.forget(EX, 'P');
    await c.poll();
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'released' });
    f.advance(UNHELD_KEPT_MS - 1);
    await c.poll();
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'released' }); // not yet
    f.advance(1);
    await c.poll();
    const owners = await ownership.owners(EX);
    expect(owners.has('X')).toBe(false);
    expect(owners.get('P')).toEqual({ term: 4, state: 'released' });
    // The market comes back: unowned, claimed afresh.
    expect((await c.admit(EX, ['X'])).get('X')).toBe('owner');
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'owned' });
  });

  it('counts the hour from when a recorder first saw the entry unheld: a restarted recorder does not start it again', async () => {
    const ownership = new MemoryOwnership();
    const first = fakes({ term: 4, alive: [5] });
    await ownership.swap(EX, ['Y'], null, { term: 5, state: 'released' });
    await controller(first, ownership).poll();
    // The recorder restarts (a new term) most of an hour later, its clock no further than the wall's.
    const again = fakes({ term: 6, alive: [5] });
    again.advance(UNHELD_KEPT_MS - 1);
    const c = controller(again, ownership);
    await c.poll();
    expect((await ownership.owners(EX)).get('Y')).toEqual({ term: 5, state: 'released' }); // not yet
    again.advance(1);
    await c.poll();
    expect((await ownership.owners(EX)).has('Y')).toBe(false);
    expect(await ownership.unheldSince(EX)).toEqual(new Map());
  });

  it('a failure forgetting unheld tickers (Redis) does not hold back the poll’s takeovers', async () => {
    const ownership = new MemoryOwnership();
    await ownership.swap(EX, ['X', 'Y'], null, { term: 3, state: 'released' });
    ownership.unheldSince = () => Promise.reject(new Error('redis gone'));
    const f = fakes({ term: 4, alive: [3], landed: { X: LANDED } });
    const c = controller(f, ownership);
    await c.admit(EX, ['X', 'Y']);
    f.live.add('X');
    await c.poll();
    expect(f.handovers.map((h) => [h.ticker, h.kind, h.fromTerm])).toEqual([['X', 'release', 3]]);
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'owned' });
  });

  it('keeps a released entry that someone holds again before the hour is up, and counts the hour afresh after', async () => {
    const ownership = new MemoryOwnership();
    const f = fakes({ term: 4, alive: [5] });
    const c = controller(f, ownership);
    await ownership.swap(EX, ['Y'], null, { term: 5, state: 'released' });
    await c.poll();
    f.advance(UNHELD_KEPT_MS - 1);
    await ownership.setLive(EX, 5, ['Y'], []); // the peer holds it again
    await c.poll();
    await ownership.setLive(EX, 5, [], ['Y']);
    f.advance(UNHELD_KEPT_MS - 1);
    await c.poll(); // unheld again for 0 ms, not almost two hours
    expect((await ownership.owners(EX)).get('Y')).toEqual({ term: 5, state: 'released' });
    // Claimed between the read and the delete: the compare-and-delete leaves the claim.
    f.advance(UNHELD_KEPT_MS);
    const owners = ownership.owners.bind(ownership);
    ownership.owners = async (exchange) => {
      const read = await owners(exchange);
      await ownership.swap(EX, ['Y'], { term: 5, state: 'released' }, { term: 6, state: 'splicing' });
      return read;
    };
    await c.poll();
    expect((await owners(EX)).get('Y')).toEqual({ term: 6, state: 'splicing' });
  });

  it('leaves nothing of the tickers that came and went in the routing sink (where handed over, buffered rows)', async () => {
    // The real routing sink and standby buffer; term 5, alive, owns the S tickers (standby here).
    const ownership = new MemoryOwnership();
    const f = fakes({ term: 4, alive: [5] });
    const buffer = new StandbyBuffer(() => 0);
    const rs = new RoutingSink(new ListSink(), buffer);
    const c = new Controller({
      ...optionsOf(f),
      ownership,
      routing: {
        setOwner: (e, t, owned) => rs.setOwned(e, t, owned),
        endOf: (e, t) => rs.endOf(e, t),
        forget: (e, t) => rs.forget(e, t),
      },
    });
    const handed = (rs as unknown as { handed: Map<ExchangeKey, Map<string, number>> }).handed;
    const buffered = (buffer as unknown as { exchanges: Map<ExchangeKey, Map<string, unknown>> }).exchanges;
    const entries = (m: Map<ExchangeKey, Map<string, unknown>>) => [...m.values()].reduce((n, t) => n + t.size, 0);
    // A hundred markets, two at a time (one ours, one the peer's), each recorded, then dropped by the venue.
    for (let n = 0; n < 100; n++) {
      const [mine, peers] = [`M${n}`, `S${n}`];
      await ownership.swap(EX, [peers], null, { term: 5, state: 'owned' });
      await c.admit(EX, [mine, peers]);
      expect([c.role(EX, mine), c.role(EX, peers)]).toEqual(['owner', 'standby']);
      for (const t of [mine, peers]) rs.delta(EX, t, 1000 + n, (1000 + n) * 1000, BID, '0.5', '1', 1000 + n, '');
      c.forget(EX, mine);
      c.forget(EX, peers);
      await c.poll();
      expect([c.role(EX, mine), c.role(EX, peers)]).toEqual([undefined, undefined]);
    }
    expect(entries(handed)).toBe(0);
    expect(entries(buffered)).toBe(0);
    expect(buffer.size).toBe(0);
  });

  it('keeps a ticker admitted again while the poll takes it out of the live set (and publishes it again)', async () => {
    const ownership = new MemoryOwnership();
    const f = fakes({ term: 4 });
    const c = controller(f, ownership);
    await c.admit(EX, ['X']);
    f.live.add('X');
    await c.poll();
    f.advance(LIVE_SETTLE_MS);
    await c.poll(); // published live
    c.forget(EX, 'X');
    // The listing lists X again while the poll's Redis call that unpublishes it is under way.
    const setLive = ownership.setLive.bind(ownership);
    let readmitted: Promise<unknown> | undefined;
    ownership.setLive = (exchange, term, add, remove) => {
      if (remove.includes('X')) readmitted ??= c.admit(EX, ['X']);
      return setLive(exchange, term, add, remove);
    };
    await c.poll();
    await readmitted;
    expect(c.role(EX, 'X')).toBe('standby'); // released by the forget, recorded again: a role, as at any admit
    expect(f.calls.filter((call) => call[0] === 'forget')).toEqual([]);
    await c.poll();
    expect((await ownership.liveSets(EX)).get(4)).toEqual(new Set(['X']));
  });

  it('keeps a ticker admitted again before the poll forgot it', async () => {
    const ownership = new MemoryOwnership();
    const f = fakes({ term: 4 });
    const c = controller(f, ownership);
    await c.admit(EX, ['X']);
    c.forget(EX, 'X');
    await c.admit(EX, ['X']);
    await c.poll();
    expect(c.role(EX, 'X')).toBe('owner');
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'owned' });
  });
});

describe('Controller release', () => {
  /** Term 4 owns `tickers`; the live peer 5 is live on all of them. */
  const ownedBy4 = async (...tickers: string[]) => {
    const ownership = new MemoryOwnership();
    const f = fakes({ term: 4, alive: [5] });
    const c = controller(f, ownership);
    await c.admit(EX, tickers);
    await ownership.setLive(EX, 5, tickers, []);
    return { ownership, f, c };
  };

  it('on SIGTERM stops routing, waits for drained before releasing, then waits until the peer owns the ticker', async () => {
    const ownership = new MemoryOwnership();
    const f = fakes({ term: 4, alive: [5] });
    const c = controller(f, ownership);
    await c.admit(EX, ['X', 'Y']);
    await ownership.setLive(EX, 5, ['X'], []); // the peer is live on X only
    f.holdDrained();
    f.calls.length = 0;
    let done = false;
    const releasing = c.releaseAll().then(() => {
      done = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(f.calls).toEqual([['setOwner', 'X', false], ['drained']]);
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'owned' });
    f.releaseDrained();
    await new Promise((r) => setImmediate(r));
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'released' });
    expect((await ownership.owners(EX)).get('Y')).toEqual({ term: 4, state: 'owned' });
    expect(done).toBe(false);
    // The peer takes X.
    await ownership.claim(EX, ['X'], { term: 4, state: 'released' }, 5);
    await releasing;
    expect(done).toBe(true);
    expect(c.role(EX, 'X')).toBe('standby');
    expect(c.role(EX, 'Y')).toBe('owner');
  });

  it('stops waiting for a peer at the release timeout', async () => {
    const ownership = new MemoryOwnership();
    const f = fakes({ term: 4, alive: [5] });
    const registry = new Registry();
    const c = controller(f, ownership, registry);
    await c.admit(EX, ['X']);
    await ownership.setLive(EX, 5, ['X'], []);
    await c.releaseAll();
    // Nobody took it: ours again, its rows buffered meanwhile written on (the hand-back), routed to the writer.
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'owned' });
    expect(f.calls.filter((call) => call[0] === 'writeOwnGap')).toEqual([['writeOwnGap', 'X']]);
    expect(f.owned.get('X')).toBe(true);
    const metrics = await registry.metrics();
    expect(metrics).toContain('recorder_handovers_total{kind="release",result="timeout"} 1');
    expect(metrics).toContain('recorder_handovers_total{kind="release",result="returned"} 1');
  });

  it('hands tickers to live peers once inserts have failed for RECORDER_HANDOVER_ON_WRITE_FAILURE_MS', async () => {
    const ownership = new MemoryOwnership();
    const f = fakes({ term: 4, alive: [5] });
    const c = controller(f, ownership);
    await c.admit(EX, ['X', 'Y']);
    await ownership.setLive(EX, 5, ['X'], []);
    // The writer says how long, by its own clock: the controller's (another origin) is not compared with it.
    f.advance(1_700_000_000_000);
    f.setTroubleFor(59_999);
    await c.poll();
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'owned' });
    f.setTroubleFor(60_000);
    await c.poll();
    expect(Object.fromEntries(await ownership.owners(EX))).toEqual({
      X: { term: 4, state: 'released' },
      Y: { term: 4, state: 'owned' },
    });
    expect(f.owned.get('X')).toBe(false);
  });

  it('waits for the writer at most 2 × TTL before releasing (the writer spools what it holds then)', async () => {
    const { f, c } = await ownedBy4('X');
    c.onSpoolFull(true);
    await c.poll();
    expect(f.drainTimeouts).toEqual([2 * TTL]);
  });

  it('a release Redis fails midway leaves the tickers recorded: owned again, routed to the writer, buffer written', async () => {
    const { ownership, f, c } = await ownedBy4('X', 'Y');
    const release = ownership.release.bind(ownership);
    // The command ran on the server, its answer was lost.
    ownership.release = async (...args: Parameters<MemoryOwnership['release']>) => {
      await release(...args);
      throw new Error('Command timed out');
    };
    c.onSpoolFull(true);
    await c.poll();
    expect([c.role(EX, 'X'), c.role(EX, 'Y')]).toEqual(['owner', 'owner']);
    expect(Object.fromEntries(await ownership.owners(EX))).toEqual({
      X: { term: 4, state: 'owned' },
      Y: { term: 4, state: 'owned' },
    });
    expect([f.owned.get('X'), f.owned.get('Y')]).toEqual([true, true]);
    expect(f.calls.filter((call) => call[0] === 'writeOwnGap').map((call) => call[1])).toEqual(['X', 'Y']);
  });

  it('a release failing on the second exchange gives the first exchange’s switched tickers back', async () => {
    const EX2 = 'venue_d' as ExchangeKey;
    const ownership = new MemoryOwnership();
    const f = fakes({ term: 4, alive: [5] });
    const c = controller(f, ownership, undefined, [EX, EX2]);
    await c.admit(EX, ['X']);
    await c.admit(EX2, ['Y']);
    await ownership.setLive(EX, 5, ['X'], []);
    // Redis fails once the first exchange's ticker is switched, on the second exchange's live sets.
    let switched = false;
    const setOwner = f.routing.setOwner;
    f.routing.setOwner = (exchange, ticker, isOwner) => {
      if (!isOwner) switched = true;
      setOwner(exchange, ticker, isOwner);
    };
    const liveSets = ownership.liveSets.bind(ownership);
    ownership.liveSets = (exchange) =>
      exchange === EX2 && switched ? Promise.reject(new Error('Command timed out')) : liveSets(exchange);
    f.calls.length = 0;
    c.onSpoolFull(true);
    await c.poll();
    // X was switched to the buffer, then given back.
    expect(f.calls.filter((call) => call[0] === 'setOwner' && call[1] === 'X')).toEqual([
      ['setOwner', 'X', false],
      ['setOwner', 'X', true],
    ]);
    expect([c.role(EX, 'X'), f.owned.get('X')]).toEqual(['owner', true]);
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'owned' });
  });

  it('a ticker it writes that Redis still has as released by it (an undo that failed) is owned again at the poll', async () => {
    const { ownership, c } = await ownedBy4('X');
    await ownership.release(EX, ['X'], 4, 'released');
    expect(c.role(EX, 'X')).toBe('owner');
    await c.poll();
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'owned' });
  });

  it('releaseAll never rejects (the stop must go on to flush): Redis failing while it waits for the peer', async () => {
    const { ownership, c } = await ownedBy4('X');
    ownership.owners = () => Promise.reject(new Error('Connection is closed.'));
    await expect(c.releaseAll()).resolves.toBeUndefined();
  });

  it('hands tickers to live peers when the spool is full', async () => {
    const { ownership, c } = await ownedBy4('X');
    c.onSpoolFull(true);
    await c.poll();
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'released' });
  });
});

describe('Controller loss offers (decision 4)', () => {
  it('writes its own gap at once when no live peer is live on the ticker', async () => {
    const ownership = new MemoryOwnership();
    const f = fakes({ term: 4, alive: [] });
    const c = controller(f, ownership);
    await c.admit(EX, ['X']);
    await ownership.setLive(EX, 5, ['X'], []); // term 5 is live on X but its lease is gone
    f.calls.length = 0;
    expect(await c.onLost(EX, 'X', 1000, 'stall')).toBe('gap');
    expect(f.calls).toEqual([
      ['setOwner', 'X', true],
      ['writeOwnGap', 'X'],
    ]);
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'owned' });
  });

  it('takes an unclaimed offer back after the offer timeout and writes its own gap', async () => {
    const ownership = new MemoryOwnership();
    const f = fakes({ term: 4, alive: [5] });
    const registry = new Registry();
    const c = controller(f, ownership, registry);
    await c.admit(EX, ['X']);
    await ownership.setLive(EX, 5, ['X'], []);
    f.calls.length = 0;
    expect(await c.onLost(EX, 'X', 1000, 'stall')).toBe('gap');
    const order = names(f.calls).filter((n) => n !== 'sleep');
    expect(order).toEqual(['setOwner', 'drained', 'setOwner', 'writeOwnGap']);
    expect(f.calls[0]).toEqual(['setOwner', 'X', false]);
    expect(f.calls.at(-2)).toEqual(['setOwner', 'X', true]);
    expect((await ownership.owners(EX)).get('X')).toEqual({ term: 4, state: 'owned' });
    expect(c.role(EX, 'X')).toBe('owner');
    expect(await registry.metrics()).toContain('recorder_handovers_total{kind="offer",result="returned"} 1');
  });

  it('writes no gap when a live peer takes the offer', async () => {
    const ownership = new MemoryOwnership();
    const owner = fakes({ term: 4, alive: [5], landed: { X: LANDED } });
    const peer = fakes({ term: 5, alive: [4], landed: { X: LANDED } });
    const co = controller(owner, ownership);
    const cp = controller(peer, ownership);
    await co.admit(EX, ['X']);
    await cp.admit(EX, ['X']);
    peer.live.add('X');
    await cp.poll(); // the book is live: its settle time starts
    peer.advance(LIVE_SETTLE_MS);
    await cp.poll(); // publishes the peer's live set
    const lost = co.onLost(EX, 'X', 1000, 'stall');
    // The peer's poll finds the offer while the owner waits.
    await new Promise((r) => setImmediate(r));
    await cp.poll();
    expect(await lost).toBe('peer');
    expect(names(owner.calls)).not.toContain('writeOwnGap');
    expect(co.role(EX, 'X')).toBe('standby');
    expect(cp.role(EX, 'X')).toBe('owner');
    expect(peer.handovers.map((h) => [h.kind, h.fromTerm, h.toTerm, h.ts])).toEqual([['offer', 4, 5, 5001]]);
  });
});
