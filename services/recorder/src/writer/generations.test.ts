/**
 * The writer's redundant-recording duties: ordered book generations (what lands of a ticker is a prefix of what was
 * produced for it, whatever prefix of the inserts succeeded), the term, the gate, drained(), write trouble, and the
 * fenced replay of a spool.
 */
import { closeSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from '@depthgate/service-kit';
import type { InsertTable, ProbeKey } from '@depthgate/history-store';
import { LocalBook } from '@depthgate/feeds';
import { fenceOf } from '../redundancy/spool-fence';
import { batchText, type SealedBatch } from './batch';
import { TsvSink } from './sink';
import { TableSpool, encodeRecord, readRecord } from './spool';
import { Writer, type WriterOptions, type WriterStore } from './writer';

const logger = createLogger({ name: 't', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'dg-gen-test-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 2, 10);

/** A store that takes `okInserts` inserts and then refuses every other (ClickHouse gone: a crash of the writer). */
function stoppingStore(okInserts = Infinity) {
  const landed: { table: InsertTable; lines: string[]; queryId: string }[] = [];
  const state = { attempts: 0, ok: okInserts, probes: 0 };
  const store: WriterStore = {
    async insert(table, source, o) {
      let text = '';
      for await (const c of source as AsyncIterable<Buffer | string>) text += c.toString();
      state.attempts++;
      if (state.ok <= 0) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      state.ok--;
      landed.push({ table, lines: text.replace(/\n$/, '').split('\n'), queryId: o?.queryId ?? '' });
      return { queryId: o?.queryId ?? '' };
    },
    async probeBatch(key: ProbeKey) {
      state.probes++;
      return landed.some(
        (b) =>
          b.table === key.table &&
          b.lines.some((l) => {
            const f = l.split('\t');
            const ts = key.table === 'gaps' ? key.fromTs : key.ts;
            return f[0] === key.exchange && f[1] === key.ticker && f[2] === String(ts);
          }),
      );
    },
    async ensureQueryEnded() {},
    retriesDeduplicated: false,
  };
  return { store, landed, state };
}

function makeWriter(store: WriterStore, extra: Partial<WriterOptions> = {}) {
  return new Writer({
    store,
    spoolDir: tmp(),
    maxMemoryBytes: 1 << 24,
    maxSpoolBytes: 1 << 30,
    spoolFileBytes: 1 << 20,
    insertTimeoutMs: 5000,
    logger,
    ...extra,
  });
}

async function until(cond: () => boolean, ms = 5000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timeout');
    await new Promise((r) => setTimeout(r, 2));
  }
}

function oneLevel(price: string): LocalBook {
  const b = new LocalBook();
  b.bids.set(price, { q: 1n, s: '1', e: 0 });
  return b;
}

/** A production's row of one ticker: D (delta, by sequence), G (book gap), S (gap-closing snapshot), C (cadence). */
type Produced = { kind: 'D' | 'G' | 'S' | 'C'; id: string };

/**
 * Drives a sink with a deterministic mix over three tickers: deltas, cadence snapshots, gaps each followed by the
 * snapshot that closes them (sometimes after another ticker's rows), a book gap right after another. Small size
 * bounds, so generations end by size too. Returns the sealed batches in order and each ticker's rows in order.
 */
function produce(): { sealed: SealedBatch[]; produced: Map<string, Produced[]> } {
  const sealed: SealedBatch[] = [];
  const sink = new TsvSink(
    { maxRows: 7, maxBytes: 1 << 20, maxDelayMs: 1e9 },
    () => 0,
    (b) => sealed.push(b),
  );
  const produced = new Map<string, Produced[]>();
  const add = (t: string, p: Produced) => produced.set(t, [...(produced.get(t) ?? []), p]);
  let seq = 0;
  let rnd = 12345;
  const next = () => (rnd = (rnd * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const open = new Map<string, number>(); // a gap waiting for its snapshot
  for (let i = 0; i < 400; i++) {
    const ticker = `K${Math.floor(next() * 3)}`;
    const ts = T0 + i;
    const r = next();
    if (open.has(ticker)) {
      // (a ticker in a gap writes the closing snapshot before anything else)
      open.delete(ticker);
      sink.snapshot('venue_b', ticker, ts, oneLevel('0.9'), ts, '');
      add(ticker, { kind: 'S', id: String(ts) });
    } else if (r < 0.08) {
      sink.gap('venue_b', ticker, ts - 3, ts, 'disconnect', ts);
      add(ticker, { kind: 'G', id: String(ts - 3) });
      open.set(ticker, ts);
    } else if (r < 0.16) {
      sink.snapshot('venue_b', ticker, ts, oneLevel('0.1'), ts, '');
      add(ticker, { kind: 'C', id: String(ts) });
    } else if (r < 0.2) {
      sink.tick(0, true); // an age seal
      sink.delta('venue_b', ticker, ts, ++seq, 1, '0.5', '1', ts, '');
      add(ticker, { kind: 'D', id: String(seq) });
    } else {
      sink.delta('venue_b', ticker, ts, ++seq, 1, '0.5', '1', ts, '');
      add(ticker, { kind: 'D', id: String(seq) });
    }
  }
  sink.tick(0, true);
  return { sealed, produced };
}

/** Each ticker's landed book rows, in the order they were produced. */
function landedRows(landed: { table: InsertTable; lines: string[] }[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const b of landed) {
    for (const l of b.lines) {
      const f = l.split('\t');
      const ticker = f[1] as string;
      const key =
        b.table === 'deltas' ? `D${f[3]}` : b.table === 'gaps' ? `G${f[2]}` : `${f[4] === '0.9' ? 'S' : 'C'}${f[2]}`;
      const s = out.get(ticker) ?? new Set<string>();
      s.add(key);
      out.set(ticker, s);
    }
  }
  return out;
}

describe('ordered book generations', () => {
  it('seals the three book tables together, deltas → gaps → snapshots, when one of them is full', () => {
    const sealed: SealedBatch[] = [];
    const sink = new TsvSink(
      { maxRows: 3, maxBytes: 1 << 20, maxDelayMs: 1e9 },
      () => 0,
      (b) => sealed.push(b),
    );
    sink.snapshot('venue_b', 'KY', T0, oneLevel('0.1'), T0, '');
    sink.gap('venue_b', 'KZ', T0 - 5, T0, 'stall', T0);
    sink.delta('venue_b', 'KX', T0, 1, 1, '0.5', '1', T0, '');
    sink.delta('venue_b', 'KX', T0, 2, 1, '0.5', '1', T0, '');
    expect(sealed).toEqual([]);
    sink.delta('venue_b', 'KX', T0, 3, 1, '0.5', '1', T0, '');
    expect(sealed.map((b) => [b.table, b.rows])).toEqual([
      ['deltas', 3],
      ['gaps', 1],
      ['snapshots', 1],
    ]);
  });

  it('tells of every gap row it takes, with its stream (the gap metrics count what is stored)', () => {
    const told: string[] = [];
    const sink = new TsvSink(
      { maxRows: 1000, maxBytes: 1 << 20, maxDelayMs: 1e9 },
      () => 0,
      () => undefined,
      undefined,
      (exchange, reason, stream) => told.push(`${exchange} ${reason} ${stream}`),
    );
    sink.gap('venue_b', 'KX', T0, T0 + 10, 'disconnect', T0 + 10);
    sink.gap('venue_c', 'BTCUSD', T0, T0 + 10, 'no_backfill', T0 + 10, 'trades');
    sink.delta('venue_b', 'KX', T0 + 11, 3, 1, '0.5', '1', T0 + 11, '');
    expect(told).toEqual(['venue_b disconnect book', 'venue_c no_backfill trades']);
  });

  it('ends a generation before a delta of a ticker whose gap (and closing snapshot) it holds', () => {
    const sealed: SealedBatch[] = [];
    const sink = new TsvSink(
      { maxRows: 1000, maxBytes: 1 << 20, maxDelayMs: 1e9 },
      () => 0,
      (b) => sealed.push(b),
    );
    sink.delta('venue_b', 'KX', T0, 1, 1, '0.5', '1', T0, '');
    sink.gap('venue_b', 'KX', T0, T0 + 10, 'disconnect', T0 + 10);
    sink.delta('venue_b', 'KY', T0 + 10, 2, 1, '0.5', '1', T0 + 10, ''); // another ticker: same generation
    sink.snapshot('venue_b', 'KX', T0 + 10, oneLevel('0.9'), T0 + 10, '');
    expect(sealed).toEqual([]);
    sink.delta('venue_b', 'KX', T0 + 11, 3, 1, '0.5', '1', T0 + 11, '');
    expect(sealed.map((b) => [b.table, batchText(b).split('\n').filter(Boolean).length])).toEqual([
      ['deltas', 2],
      ['gaps', 1],
      ['snapshots', 1],
    ]);
    // A trades gap does not end anything.
    sink.gap('venue_b', 'KX', T0, T0 + 10, 'disconnect', T0 + 10, 'trades');
    sink.delta('venue_b', 'KX', T0 + 12, 4, 1, '0.5', '1', T0 + 12, '');
    expect(sealed).toHaveLength(3);
  });

  it('whatever prefix of the inserts lands, each ticker has a prefix of its rows (cadence snapshots aside)', async () => {
    const total = produce().sealed.length;
    expect(total).toBeGreaterThan(30);
    for (let k = 0; k <= total; k++) {
      const { sealed, produced } = produce();
      const { store, landed, state } = stoppingStore(k);
      const w = makeWriter(store);
      w.start();
      for (const b of sealed) w.enqueue(b);
      await until(() => w.idle || state.attempts > k);
      await w.close(0);
      const got = landedRows(landed);
      for (const [ticker, rows] of produced) {
        const have = got.get(ticker) ?? new Set<string>();
        const key = (p: Produced) => `${p.kind}${p.id}`;
        // The landed rows other than cadence snapshots are the first n of them...
        const main = rows.filter((p) => p.kind !== 'C');
        const n = main.filter((p) => have.has(key(p))).length;
        expect(main.slice(0, n).every((p) => have.has(key(p)))).toBe(true);
        // ...and a landed cadence snapshot has every delta, gap and closing snapshot produced before it landed.
        rows.forEach((p, i) => {
          if (p.kind === 'C' && have.has(key(p))) {
            expect(rows.slice(0, i).filter((q) => q.kind !== 'C' && !have.has(key(q)))).toEqual([]);
          }
        });
      }
      if (k === total) expect(landed.length).toBe(total);
    }
  });
});

describe('term, gate, drained, write trouble', () => {
  const deltasBatch = (from: number, ticker = 'KX') => {
    const sealed: SealedBatch[] = [];
    const sink = new TsvSink(
      { maxRows: 1000, maxBytes: 1 << 20, maxDelayMs: 1e9 },
      () => 0,
      (b) => sealed.push(b),
    );
    for (let i = 0; i < 2; i++) sink.delta('venue_b', ticker, T0 + from + i, from + i, 1, '0.5', '1', T0, '');
    sink.tick(0, true);
    return sealed[0] as SealedBatch;
  };

  it('names its term in insert query ids; solo inserts keep the old form', async () => {
    for (const [term, pattern] of [
      [7, /^rec-7-deltas-[0-9a-f-]{36}$/],
      [0, /^dg-insert-deltas-[0-9a-f-]{36}$/],
    ] as const) {
      const { store, landed } = stoppingStore();
      const w = makeWriter(store, { term });
      w.start();
      const b = deltasBatch(1);
      w.enqueue(b);
      expect(b.term).toBe(term);
      await until(() => w.idle);
      expect(landed[0]?.queryId).toMatch(pattern);
      await w.close(100);
    }
  });

  it('spools instead of inserting while the gate is shut (no failure), and replays in order once it opens', async () => {
    const { store, landed, state } = stoppingStore();
    let open = false;
    const w = makeWriter(store, { term: 3, gate: () => open });
    w.start();
    w.enqueue(deltasBatch(1));
    w.enqueue(deltasBatch(10));
    await w.drained();
    expect(state.attempts).toBe(0);
    expect(w.spoolBytes()).toBeGreaterThan(0);
    expect(w.writeTroubleSince()).toBeUndefined();
    w.enqueue(deltasBatch(20)); // behind the spool
    open = true;
    await until(() => w.idle);
    expect(landed.flatMap((b) => b.lines.map((l) => Number(l.split('\t')[3])))).toEqual([1, 2, 10, 11, 20, 21]);
    expect(landed.every((b) => b.queryId.startsWith('rec-3-deltas-'))).toBe(true);
    await w.close(100);
  });

  it('drained() waits for what was enqueued before it to land', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    const { store, landed } = stoppingStore();
    const insert = store.insert.bind(store);
    store.insert = async (...args) => {
      await held;
      return insert(...args);
    };
    const w = makeWriter(store);
    w.start();
    w.enqueue(deltasBatch(1));
    let done = false;
    const drained = w.drained().then(() => (done = true));
    await new Promise((r) => setTimeout(r, 30));
    expect(done).toBe(false);
    release();
    await drained;
    expect(landed).toHaveLength(1);
    await w.drained(); // nothing pending: at once
    await w.close(100);
  });

  const seqs = (landed: { lines: string[] }[]) => landed.flatMap((b) => b.lines.map((l) => Number(l.split('\t')[3])));

  it('while a lane’s spool holds batches, a younger one goes behind them even with the spool full: order kept', async () => {
    const { store, landed, state } = stoppingStore(0); // ClickHouse away
    const first = deltasBatch(1);
    const w = makeWriter(store, { maxMemoryBytes: first.bytes, maxSpoolBytes: 1 });
    w.start();
    w.enqueue(first); // memory, being retried
    await until(() => state.attempts >= 1);
    w.enqueue(deltasBatch(10)); // memory full: the spool, which is full from now on
    expect(w.spoolFull).toBe(true);
    w.enqueue(deltasBatch(20));
    w.enqueue(deltasBatch(30));
    state.ok = Infinity;
    await until(() => w.idle);
    expect(seqs(landed)).toEqual([1, 2, 10, 11, 20, 21, 30, 31]);
    await w.close(100);
  });

  it('drained(timeout) spools what ClickHouse does not take in time; it lands once, in order, when it is back', async () => {
    const { store, landed, state } = stoppingStore(0);
    const w = makeWriter(store);
    w.start();
    w.enqueue(deltasBatch(1));
    w.enqueue(deltasBatch(10));
    await until(() => state.attempts >= 1);
    const outcome = await Promise.race([
      w.drained(30).then(() => 'drained'),
      new Promise((r) => setTimeout(() => r('still waiting'), 3000)),
    ]);
    expect(outcome).toBe('drained');
    expect(w.bufferedRows().reduce((a, b) => a + b, 0)).toBe(0);
    expect(w.spoolBytes()).toBeGreaterThan(0);
    w.enqueue(deltasBatch(20)); // behind the spool
    state.ok = Infinity;
    await until(() => w.idle);
    expect(seqs(landed)).toEqual([1, 2, 10, 11, 20, 21]);
    await w.close(100);
  });

  it('an in-flight batch copied to the spool, sent again since and then evicted: its copy names its last query id', async () => {
    const { store, landed, state } = stoppingStore(0);
    const ids: string[] = [];
    const ended: string[] = [];
    const insert = store.insert.bind(store);
    store.insert = (table, source, o) => {
      ids.push(o?.queryId ?? '');
      return insert(table, source, o);
    };
    store.ensureQueryEnded = async (id) => void ended.push(id);
    const first = deltasBatch(1);
    const w = makeWriter(store, { maxMemoryBytes: first.bytes });
    w.start();
    w.enqueue(first);
    await until(() => state.attempts >= 1);
    w.enqueue(deltasBatch(10)); // memory full: to the spool, a copy of the one in flight in front
    w.enqueue(deltasBatch(20)); // (no second copy of it)
    await until(() => state.attempts >= 3); // sent again twice: other query ids
    await w.drained(20);
    const last = ids.at(-1) as string;
    state.ok = Infinity;
    await until(() => w.idle);
    // The replay made sure the last attempt had ended before probing for it, and every batch landed once.
    expect(ended.indexOf(last)).toBeGreaterThanOrEqual(0);
    expect(seqs(landed)).toEqual([1, 2, 10, 11, 20, 21]);
    await w.close(100);
  });

  it('a spool that cannot be written loses none of the batches waiting in memory', async () => {
    const { store, landed, state } = stoppingStore(0);
    const first = deltasBatch(1);
    const second = deltasBatch(10);
    const w = makeWriter(store, { maxMemoryBytes: first.bytes + second.bytes });
    w.start();
    w.enqueue(first);
    await until(() => state.attempts >= 1);
    w.enqueue(second); // memory: waiting behind the one in flight
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const prepend = jest.spyOn(TableSpool.prototype, 'prepend').mockImplementationOnce(() => {
      throw full;
    });
    w.enqueue(deltasBatch(20)); // memory is full: to the spool, which cannot be written this once
    expect(prepend).toHaveBeenCalledTimes(1);
    prepend.mockRestore();
    state.ok = Infinity;
    await until(() => w.idle);
    expect(seqs(landed)).toEqual([1, 2, 10, 11, 20, 21]);
    expect(w.bufferedRows().reduce((a, b) => a + b, 0)).toBe(0);
    await w.close(100);
  });

  it('says since when inserts fail, and forgets it after a success', async () => {
    const { store, state } = stoppingStore(0);
    let now = 1000;
    const w = makeWriter(store, { now: () => now });
    w.start();
    expect(w.writeTroubleSince()).toBeUndefined();
    w.enqueue(deltasBatch(1));
    await until(() => state.attempts >= 1);
    now = 5000;
    await until(() => state.attempts >= 2);
    expect(w.writeTroubleSince()).toBe(1000);
    expect(w.writeTroubleForMs()).toBe(4000);
    state.ok = Infinity;
    await until(() => w.idle);
    expect(w.writeTroubleSince()).toBeUndefined();
    await w.close(100);
  });
});

function makeSpoolWith(b: SealedBatch): TableSpool {
  const dir = tmp();
  const spool = new TableSpool(dir, 'book', 1 << 20);
  spool.append(b);
  spool.close();
  return new TableSpool(dir, 'book', 1 << 20);
}

describe('spool records with a term, and the fenced replay', () => {
  const batchOf = (lines: string[], table: InsertTable = 'deltas', term?: number): SealedBatch => {
    const sealed: SealedBatch[] = [];
    const sink = new TsvSink(
      { maxRows: 1000, maxBytes: 1 << 20, maxDelayMs: 1e9 },
      () => 0,
      (b) => sealed.push(b),
    );
    for (const l of lines) {
      const [ticker, ts, seq] = l.split(' ');
      if (table === 'deltas') sink.delta('venue_b', ticker as string, Number(ts), Number(seq), 1, '0.5', '1', 0, '');
      else sink.gap('venue_b', ticker as string, Number(ts), Number(seq), 'disconnect', 0);
    }
    sink.tick(0, true);
    const b = sealed[0] as SealedBatch;
    if (term !== undefined) b.term = term;
    return b;
  };

  it('keeps the term in the record header (version still 1); a record without one reads as term 0', () => {
    const dir = tmp();
    const spool = new TableSpool(dir, 'book', 1 << 20);
    spool.append(batchOf(['KX 1000 1'], 'deltas', 9));
    spool.close();
    const file = path.join(dir, 'book', '100000000000.spool');
    const fd = openSync(file, 'r');
    try {
      const r = readRecord(fd, 0, statSync(file).size, file);
      expect(r.ok && r.batch.term).toBe(9);
    } finally {
      closeSync(fd);
    }
    const header = (b: SealedBatch) => {
      const record = encodeRecord(b);
      return JSON.parse(record.subarray(12, 12 + record.readUInt32LE(0)).toString()) as Record<string, unknown>;
    };
    expect(header(batchOf(['KX 1000 1'], 'deltas', 9))).toMatchObject({ v: 1, term: 9 });
    // Solo records are today's, byte for byte: no term field.
    expect(header(batchOf(['KX 1000 1'], 'deltas', 0))).not.toHaveProperty('term');
    const solo = makeSpoolWith(batchOf(['KX 1000 1']));
    expect(solo.peek()?.term).toBe(0);
  });

  it('replays each term through its fence: drops fenced rows, clips gaps, skips a record with nothing left', async () => {
    const dir = tmp();
    // A deposed term 4 spooled these; KX was handed over at 1000 and came back at 2000. Term 5 spooled one more.
    const spool = new TableSpool(dir, 'book', 1 << 20);
    spool.append(batchOf(['KX 999 1', 'KY 1500 2', 'KX 1500 3'], 'deltas', 4));
    spool.append(batchOf(['KX 900 1200', 'KX 1100 1300'], 'gaps', 4));
    spool.append(batchOf(['KX 1001 4', 'KX 1002 5'], 'deltas', 4));
    spool.append(batchOf(['KX 2000 6', 'KX 1002 7'], 'deltas', 5));
    spool.close();
    const asked: number[] = [];
    const { store, landed, state } = stoppingStore();
    const w = makeWriter(store, {
      spoolDir: dir,
      term: 6,
      fence: async (term) => {
        asked.push(term);
        return term === 4 ? fenceOf(new Map([['venue_b\tKX', [{ from: 1000, until: 2000 }]]])) : undefined;
      },
    });
    w.start();
    await until(() => w.idle);
    expect(asked).toEqual([4, 5]);
    expect(landed.map((b) => [b.table, b.lines.map((l) => l.split('\t').slice(1, 4).join(' '))])).toEqual([
      ['deltas', ['KX 999 1', 'KY 1500 2']],
      ['gaps', ['KX 900 1000']],
      ['deltas', ['KX 2000 6', 'KX 1002 7']],
    ]);
    // Every replayed record was probed first (the spool's rule), by the last kept row.
    expect(state.probes).toBe(3);
    expect(w.spoolEmpty).toBe(true);
    await w.close(100);
  });
  it('on a cluster leaves out the tickers of a fenced record already stored (a changed record is another block)', async () => {
    const dir = tmp();
    // Term 4 spooled this record and died after it landed on KX's shard, not on KY's; KY was taken over at 1000.
    const spool = new TableSpool(dir, 'book', 1 << 20);
    spool.append(batchOf(['KX 998 1', 'KY 997 2', 'KX 999 3', 'KY 1500 4'], 'deltas', 4));
    spool.close();
    const { store, landed, state } = stoppingStore();
    landed.push({ table: 'deltas', lines: ['venue_b\tKX\t998\t1', 'venue_b\tKX\t999\t3'], queryId: 'rec-4-x' });
    const w = makeWriter(
      { ...store, retriesDeduplicated: true },
      {
        spoolDir: dir,
        term: 5,
        fence: async (term) =>
          term === 4 ? fenceOf(new Map([['venue_b\tKY', [{ from: 1000, until: Infinity }]]])) : undefined,
      },
    );
    w.start();
    await until(() => w.idle);
    // KX's rows are not sent again (they would be a second copy: the changed record is not the block that landed);
    // KY's row before the cut is (it never landed). One probe per ticker, by its last line in the record.
    expect(landed.slice(1).map((b) => b.lines.map((l) => l.split('\t').slice(1, 4).join(' ')))).toEqual([['KY 997 2']]);
    expect(state.probes).toBe(2);
    await w.close(100);
  });

  it('filters a spooled record again when its term’s fence is invalidated while the lane retries it', async () => {
    const dir = tmp();
    const spool = new TableSpool(dir, 'book', 1 << 20);
    spool.append(batchOf(['KX 999 1', 'KX 1500 2'], 'deltas', 4));
    spool.close();
    let handedOver = false;
    const asked: number[] = [];
    const { store, landed, state } = stoppingStore(0); // ClickHouse away at first
    const w = makeWriter(store, {
      spoolDir: dir,
      term: 4,
      fence: async (term) => {
        asked.push(term);
        return handedOver ? fenceOf(new Map([['venue_b\tKX', [{ from: 1000, until: Infinity }]]])) : undefined;
      },
    });
    w.start();
    await until(() => state.attempts >= 1);
    handedOver = true; // KX went to another recorder at 1000
    w.invalidateFence(4);
    state.ok = Infinity;
    await until(() => w.idle);
    expect(asked).toEqual([4, 4]);
    expect(landed.flatMap((b) => b.lines.map((l) => l.split('\t').slice(1, 3).join(' ')))).toEqual(['KX 999']);
    await w.close(100);
  });
});
