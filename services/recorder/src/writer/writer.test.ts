import fs, {
  closeSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { createLogger } from '@depthgate/service-kit';
import { LATEST_ROW_FORMAT, type ProbeKey } from '@depthgate/history-store';
import { LocalBook } from '@depthgate/feeds';
import { MonthOf, batchText, type SealedBatch } from './batch';
import { TsvSink } from './sink';
import { TableSpool, encodeRecord } from './spool';
import { Writer, type WriterStore } from './writer';

const logger = createLogger({ name: 't', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'dg-spool-test-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function collect(limits = { maxRows: 1000, maxBytes: 1 << 20, maxDelayMs: 500 }) {
  const sealed: SealedBatch[] = [];
  const clock = { now: 0 };
  const sink = new TsvSink(
    limits,
    () => clock.now,
    (b) => sealed.push(b),
  );
  return { sealed, sink, clock };
}

const MARCH = Date.UTC(2026, 2, 31, 23, 59, 59, 999);
const APRIL = MARCH + 1;

describe('TsvSink batches', () => {
  it('renders TabSeparated rows in column order and keys the batch by its last row', () => {
    const { sink, sealed } = collect();
    sink.delta('venue_b', 'KX-1', MARCH, 7, 1, '0.48', '-20.00', MARCH + 40, '2:17');
    sink.delta('venue_b', 'KX-1', MARCH, 8, 2, '0.52', '5', MARCH + 41, '');
    const book = new LocalBook();
    book.bids.set('0.48', { q: 150n * 10n ** 18n, s: '150.00', e: 0 });
    book.asks.set('0.5', { q: 2025n * 10n ** 16n, s: '', e: 0 });
    sink.snapshot('venue_c', 'BTCUSD', MARCH, book, MARCH - 3, '');
    sink.gap('venue_a_us', 'a-b', 1, 2, 'disconnect', 3);
    sink.verification('venue_b', 'KX-1', MARCH, 'snapshot', MARCH + 50);
    sink.tick(0, true);
    const text = Object.fromEntries(sealed.map((b) => [b.table, batchText(b)]));
    expect(text.deltas).toBe(
      `venue_b\tKX-1\t${MARCH}\t7\tbid\t0.48\t-20.00\t${MARCH + 40}\t2:17\nvenue_b\tKX-1\t${MARCH}\t8\task\t0.52\t5\t${MARCH + 41}\t\n`,
    );
    expect(text.snapshots).toBe(
      `venue_c\tBTCUSD\t${MARCH}\tbid\t0.48\t150.00\t${MARCH - 3}\t\nvenue_c\tBTCUSD\t${MARCH}\task\t0.5\t20.25\t${MARCH - 3}\t\n`,
    );
    // The line format is recorded with the batch (the spool keeps it): format 4, received_ts then venue_seq last.
    expect(sealed.every((b) => b.rowFormat === 4)).toBe(true);
    expect(text.gaps).toBe('venue_a_us\ta-b\t1\t2\tdisconnect\t3\tbook\n');
    expect(text.verifications).toBe(`venue_b\tKX-1\t${MARCH}\tsnapshot\t${MARCH + 50}\n`);
    expect(sealed.find((b) => b.table === 'verifications')?.probe).toEqual({
      table: 'verifications',
      exchange: 'venue_b',
      ticker: 'KX-1',
      ts: MARCH,
      method: 'snapshot',
      detectedAt: MARCH + 50,
    });
    expect(sink.produced.verifications).toEqual([1]);
    const deltas = sealed.find((b) => b.table === 'deltas');
    expect(deltas?.probe).toEqual({ table: 'deltas', exchange: 'venue_b', ticker: 'KX-1', ts: MARCH, sequence: 8 });
    expect(deltas?.rowsByExchange).toEqual([2]);
    expect(sealed.find((b) => b.table === 'snapshots')?.rowsByExchange).toEqual([0, 2]);
  });

  it('renders trades in row format 4, keyed by their ts and trade id, with lag runs from their receipt', () => {
    const { sink, sealed } = collect();
    sink.trade({
      exchange: 'venue_b',
      ticker: 'KX-1',
      ts: MARCH,
      sequence: 9,
      tradeId: 'd91bc706-ee49',
      price: '0.36',
      size: '136',
      side: 'sell',
      venueSide: 'no',
      receivedTs: MARCH + 40,
      venueSeq: '11:7',
    });
    sink.trade({
      exchange: 'venue_c',
      ticker: 'BTCUSD',
      ts: APRIL,
      sequence: 10,
      tradeId: '2840140800042677',
      price: '9004.21',
      size: '0.0911',
      side: 'buy',
      venueSide: 'buy',
      receivedTs: APRIL + 2,
      venueSeq: '',
    });
    sink.trade({
      exchange: 'venue_c',
      ticker: 'BTCUSD',
      ts: MARCH - 5000,
      sequence: 11,
      tradeId: '2840140800042600',
      price: '9004.2',
      size: '1',
      side: 'buy',
      venueSide: 'buy',
      receivedTs: APRIL + 3,
      venueSeq: '',
    });
    sink.tick(0, true);
    const trades = sealed.filter((b) => b.table === 'trades');
    // One batch per month, as every table.
    expect(trades.map((b) => b.rows).sort()).toEqual([1, 2]);
    const march = trades.find((b) => b.rows === 2) as SealedBatch;
    expect(batchText(march)).toBe(
      `venue_b\tKX-1\t${MARCH}\t9\td91bc706-ee49\t0.36\t136\tsell\tno\t${MARCH + 40}\t11:7\n` +
        `venue_c\tBTCUSD\t${MARCH - 5000}\t11\t2840140800042600\t9004.2\t1\tbuy\tbuy\t${APRIL + 3}\t\n`,
    );
    expect(march.rowFormat).toBe(LATEST_ROW_FORMAT);
    expect(march.probe).toEqual({
      table: 'trades',
      exchange: 'venue_c',
      ticker: 'BTCUSD',
      ts: MARCH - 5000,
      tradeId: '2840140800042600',
    });
    // A trade read back late (by REST) is not counted as lagging by its age: its runs start at its receipt.
    expect(march.runs).toEqual([0, MARCH + 40 - ((MARCH + 40) % 10), 1, 1, APRIL, 1]);
    expect(sink.produced.trades).toEqual([1, 2]);
  });

  it('seals at the row bound, the byte bound and the delay bound', () => {
    const rows = collect({ maxRows: 3, maxBytes: 1 << 20, maxDelayMs: 500 });
    for (let i = 0; i < 7; i++) rows.sink.delta('venue_b', 'KX-1', MARCH, i, 1, '1', '1', MARCH, '');
    expect(rows.sealed.map((b) => b.rows)).toEqual([3, 3]);
    rows.clock.now = 499;
    rows.sink.tick(rows.clock.now);
    expect(rows.sealed).toHaveLength(2);
    rows.clock.now = 500;
    rows.sink.tick(rows.clock.now);
    expect(rows.sealed.map((b) => b.rows)).toEqual([3, 3, 1]);

    const bytes = collect({ maxRows: 1000, maxBytes: 100, maxDelayMs: 500 });
    for (let i = 0; i < 5; i++) bytes.sink.delta('venue_b', 'KX-1', MARCH, i, 1, '1', '1', MARCH, '');
    expect(bytes.sealed.length).toBeGreaterThan(0);
    expect(bytes.sealed.every((b) => b.bytes >= 100 && b.bytes < 200)).toBe(true);
  });

  it('never lets a batch span two months (one insert = one part)', () => {
    const { sink, sealed } = collect();
    sink.delta('venue_b', 'KX-1', MARCH, 1, 1, '1', '1', MARCH, '');
    sink.delta('venue_c', 'BTCUSD', APRIL, 2, 1, '1', '1', APRIL, '');
    sink.delta('venue_b', 'KX-2', MARCH, 3, 1, '1', '1', MARCH, '');
    sink.tick(0, true);
    expect(sealed.map((b) => b.rows).sort()).toEqual([1, 2]);
    const month = new MonthOf();
    for (const b of sealed) {
      const months = new Set(
        batchText(b)
          .trim()
          .split('\n')
          .map((l) => month.get(Number(l.split('\t')[2]))),
      );
      expect(months.size).toBe(1);
    }
  });

  it('keeps a whole book in one batch even past the row bound', () => {
    const { sink, sealed } = collect({ maxRows: 2, maxBytes: 1 << 20, maxDelayMs: 500 });
    const book = new LocalBook();
    for (let i = 1; i <= 5; i++) book.bids.set(String(i), { q: 10n ** 18n, s: '1', e: 0 });
    sink.snapshot('venue_b', 'KX-1', MARCH, book, MARCH, '');
    expect(sealed.map((b) => b.rows)).toEqual([5]);
  });
});

describe('spool', () => {
  const batch = (rows: number, probeTs: number): SealedBatch => {
    const { sink, sealed } = collect();
    for (let i = 0; i < rows; i++) sink.delta('venue_a_us', 'slug-a', probeTs, i + 1, 2, '0.555', '-1.5', probeTs, '');
    sink.tick(0, true);
    return sealed[0] as SealedBatch;
  };

  it('round-trips batches in order, deletes drained files, and forces a probe on replay', () => {
    const dir = tmp();
    const spool = new TableSpool(dir, 'deltas', 1 << 20);
    const a = batch(3, MARCH);
    a.lastQueryId = 'abandoned-at-shutdown';
    const b = batch(2, APRIL);
    spool.append(a);
    spool.append(b);
    expect(spool.pendingRecords).toBe(2);
    expect(spool.pendingBytesByExchange).toEqual([0, 0, a.bytes + b.bytes]);
    const first = spool.peek();
    expect(batchText(first as SealedBatch)).toBe(batchText(a));
    expect(first?.probe).toEqual(a.probe);
    expect(first?.maybeWritten).toBe(true);
    expect(first?.lastQueryId).toBe('abandoned-at-shutdown'); // the replay makes sure that insert has ended
    spool.ack(first as SealedBatch);
    const second = spool.peek();
    expect(second?.rows).toBe(2);
    expect(second?.lastQueryId).toBeUndefined();
    spool.ack(second as SealedBatch);
    expect(spool.peek()).toBeUndefined();
    expect(spool.empty).toBe(true);
    spool.close();
    // A restart finds what was left, in order.
    const again = new TableSpool(dir, 'deltas', 1 << 20);
    expect(again.empty).toBe(true);
    again.append(batch(1, MARCH));
    again.close();
    const third = new TableSpool(dir, 'deltas', 1 << 20);
    expect(third.pendingRecords).toBe(1);
    const left = third.peek() as SealedBatch;
    third.ack(left);
    expect(readdirSync(path.join(dir, 'deltas'))).toEqual([]);
    third.close();
  });

  it('rotates files at the size bound', () => {
    const dir = tmp();
    const spool = new TableSpool(dir, 'deltas', 200);
    for (let i = 0; i < 4; i++) spool.append(batch(2, MARCH + i));
    expect(readdirSync(path.join(dir, 'deltas')).length).toBeGreaterThan(1);
    let n = 0;
    for (let b = spool.peek(); b; b = spool.peek()) {
      spool.ack(b);
      n++;
    }
    expect(n).toBe(4);
    spool.close();
  });

  it('takes batches again once a new file can be created, and closes no descriptor it no longer holds', () => {
    const dir = tmp();
    const spool = new TableSpool(dir, 'deltas', 1); // a new file at every append
    const a = batch(2, MARCH);
    const b = batch(3, APRIL);
    spool.append(a);
    // The next file cannot be created (its name taken; a read-only or failing volume is the same to the spool).
    const blocker = path.join(dir, 'deltas', '100000000001.spool');
    mkdirSync(blocker);
    expect(() => spool.append(b)).toThrow(/EEXIST/);
    // The descriptor the spool closed is the process's again (the next open takes the lowest free number).
    const otherFile = path.join(dir, 'other');
    const other = openSync(otherFile, 'w');
    try {
      rmdirSync(blocker);
      spool.append(b);
      // Still open, and still that file.
      expect(fstatSync(other).ino).toBe(statSync(otherFile).ino);
    } finally {
      closeSync(other);
    }
    const read: number[] = [];
    for (let r = spool.peek(); r; r = spool.peek()) {
      read.push(r.rows);
      spool.ack(r);
    }
    expect(read).toEqual([2, 3]);
    spool.close();
  });

  it('cleans up a new file whose directory entry could not be made durable, so the next append can take its name', () => {
    const dir = tmp();
    const spool = new TableSpool(dir, 'deltas', 1);
    const fsync = jest.spyOn(fs, 'fsyncSync').mockImplementationOnce(() => {
      throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    });
    try {
      expect(() => spool.append(batch(2, MARCH))).toThrow(/EIO/);
      expect(readdirSync(path.join(dir, 'deltas'))).toEqual([]);
      spool.append(batch(3, MARCH));
    } finally {
      fsync.mockRestore();
    }
    expect(spool.peek()?.rows).toBe(3);
    spool.close();
  });

  it('reads a record an older recorder wrote (no rowFormat, lines without received_ts) as row format 1', () => {
    const dir = tmp();
    mkdirSync(path.join(dir, 'deltas'), { recursive: true });
    writeFileSync(path.join(dir, 'deltas', '100000000000.spool'), legacyRecord());
    const spool = new TableSpool(dir, 'deltas', 1 << 20);
    const b = spool.peek() as SealedBatch;
    expect(b.rowFormat).toBe(1);
    expect(b.rows).toBe(2);
    expect(batchText(b)).toBe(LEGACY_LINES);
    spool.ack(b);
    spool.close();
    // What this build spools says its format.
    const fresh = new TableSpool(tmp(), 'deltas', 1 << 20);
    fresh.append(batch(1, MARCH));
    expect(fresh.peek()?.rowFormat).toBe(LATEST_ROW_FORMAT);
    fresh.close();
  });

  it('drops a torn record at the end of a file (a crash while spooling) and keeps the rest', () => {
    const dir = tmp();
    const good = encodeRecord(batch(2, MARCH));
    const torn = encodeRecord(batch(3, MARCH)).subarray(0, 40);
    const sub = path.join(dir, 'deltas');
    rmSync(sub, { recursive: true, force: true });
    new TableSpool(dir, 'deltas', 1 << 20).close();
    writeFileSync(path.join(sub, '000000000001.spool'), Buffer.concat([good, torn]));
    const corrupt = Buffer.from(encodeRecord(batch(1, MARCH)));
    corrupt[corrupt.length - 2] = 0x41; // body byte changed: CRC mismatch
    writeFileSync(path.join(sub, '000000000002.spool'), corrupt);
    const spool = new TableSpool(dir, 'deltas', 1 << 20, logger);
    expect(spool.pendingRecords).toBe(1);
    const b = spool.peek() as SealedBatch;
    expect(b.rows).toBe(2);
    spool.ack(b);
    expect(spool.peek()).toBeUndefined();
    spool.close();
  });
});

/** Two delta lines of row format 1 (before migration 2: no received_ts). */
const LEGACY_LINES = `venue_b\tKX-OLD\t${MARCH}\t1\tbid\t0.48\t5\nvenue_b\tKX-OLD\t${MARCH}\t2\task\t0.52\t-5\n`;

/**
 * A spool record byte for byte as recorders before migration 2 wrote it: u32 header length, u32 body length, u32
 * CRC-32 of header then body, a JSON header without `rowFormat`, the TabSeparated body.
 */
function legacyRecord(): Buffer {
  const head = Buffer.from(
    JSON.stringify({
      v: 1,
      table: 'deltas',
      rows: 2,
      rowsByExchange: [2, 0, 0],
      bytesByExchange: [LEGACY_LINES.length, 0, 0],
      runs: [0, MARCH - (MARCH % 10), 2],
      probe: { table: 'deltas', exchange: 'venue_b', ticker: 'KX-OLD', ts: MARCH, sequence: 2 },
      maybeWritten: false,
    }),
  );
  const body = Buffer.from(LEGACY_LINES, 'latin1');
  const prefix = Buffer.alloc(12);
  prefix.writeUInt32LE(head.length, 0);
  prefix.writeUInt32LE(body.length, 4);
  prefix.writeUInt32LE(crc32(body, crc32(head)), 8);
  return Buffer.concat([prefix, head, body]);
}

/**
 * A store stand-in for the writer's unit tests: records inserts, answers probes from them, fails on demand. With
 * `deduplicates`, it drops a block identical to one it holds, as the replicated tables of cluster mode do.
 */
function fakeStore(options: { deduplicates?: boolean } = {}) {
  const tables = new Map<string, string[]>();
  const blocks = new Set<string>();
  /** The row format each insert was made with, in order. */
  const formats: (number | undefined)[] = [];
  const state = {
    failNext: 0 as number,
    /** Commit the insert, then fail (the ambiguous case). */
    commitThenFail: 0 as number,
    rejectNext: false,
    inserts: 0,
    probes: 0,
  };
  const store: WriterStore = {
    async insert(table, source, insertOptions) {
      formats.push(insertOptions?.rowFormat);
      let text = '';
      for await (const c of source as AsyncIterable<Buffer | string>) text += c.toString();
      state.inserts++;
      if (state.rejectNext) {
        state.rejectNext = false;
        throw new Error('Code: 27, e.displayText() = DB::Exception: Cannot parse input');
      }
      if (state.failNext > 0) {
        state.failNext--;
        throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      }
      if (!(options.deduplicates && blocks.has(`${table}\n${text}`))) {
        blocks.add(`${table}\n${text}`);
        // (Only the final newline goes: a row's last field may be empty, a venue_seq '').
        tables.set(table, [...(tables.get(table) ?? []), ...text.replace(/\n$/, '').split('\n')]);
      }
      if (state.commitThenFail > 0) {
        state.commitThenFail--;
        throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      }
      return { queryId: 'fake' };
    },
    async probeBatch(key: ProbeKey) {
      state.probes++;
      if (key.table === 'gaps') return false;
      return (tables.get(key.table) ?? []).some((l) => {
        const f = l.split('\t');
        const rest =
          key.table === 'deltas' ? f[3] === String(key.sequence) : key.table === 'trades' ? f[4] === key.tradeId : true;
        return f[0] === key.exchange && f[1] === key.ticker && f[2] === String(key.ts) && rest;
      });
    },
    async ensureQueryEnded() {},
    retriesDeduplicated: options.deduplicates ?? false,
  };
  return { store, tables, state, formats };
}

async function until(cond: () => boolean, ms = 5000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timeout');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('Writer', () => {
  const make = (store: WriterStore, extra: Partial<ConstructorParameters<typeof Writer>[0]> = {}) =>
    new Writer({
      store,
      spoolDir: tmp(),
      maxMemoryBytes: 1 << 20,
      maxSpoolBytes: 1 << 30,
      spoolFileBytes: 1 << 20,
      insertTimeoutMs: 5000,
      logger,
      ...extra,
    });
  const deltas = (sequenceFrom: number, rows = 2) => {
    const { sink, sealed } = collect();
    for (let i = 0; i < rows; i++) sink.delta('venue_b', 'KX-1', MARCH, sequenceFrom + i, 1, '1', '1', MARCH, '');
    sink.tick(0, true);
    return sealed[0] as SealedBatch;
  };

  it('retries a failed insert after a probe: an insert that committed before failing is not written twice', async () => {
    const { store, tables, state } = fakeStore();
    state.commitThenFail = 1;
    const w = make(store);
    w.start();
    w.enqueue(deltas(1));
    await until(() => w.idle);
    expect(tables.get('deltas')).toHaveLength(2);
    expect(state.probes).toBe(1);
    await w.close(1000);
  });

  it('on a cluster sends the same bytes again without a probe: the tables drop the block they already hold', async () => {
    const { store, tables, state } = fakeStore({ deduplicates: true });
    state.commitThenFail = 1;
    state.failNext = 1;
    const w = make(store);
    w.start();
    w.enqueue(deltas(1));
    w.enqueue(deltas(10));
    await until(() => w.idle);
    expect(tables.get('deltas')).toHaveLength(4);
    expect(state.inserts).toBe(4);
    expect(state.probes).toBe(0);
    await w.close(1000);
  });

  const twoTrades = () => {
    const { sink, sealed } = collect();
    for (const [sequence, tradeId] of [
      [1, 't-1'],
      [2, 't-2'],
    ] as const) {
      sink.trade({
        exchange: 'venue_b',
        ticker: 'KX-1',
        ts: MARCH,
        sequence,
        tradeId,
        price: '0.5',
        size: String(sequence),
        side: 'buy',
        venueSide: 'yes',
        receivedTs: MARCH,
        venueSeq: '',
      });
    }
    sink.tick(0, true);
    expect(sealed.map((b) => b.table)).toEqual(['trades']);
    return sealed[0] as SealedBatch;
  };

  it('copies a trades batch in flight to the spool once, however many batches go to the spool behind it', async () => {
    const { store, tables, state } = fakeStore();
    state.failNext = 1_000_000; // ClickHouse away
    const first = twoTrades();
    const w = make(store, { maxMemoryBytes: first.bytes });
    w.start();
    w.enqueue(first);
    await until(() => state.inserts > 0);
    for (let i = 0; i < 4; i++) w.enqueue(twoTrades()); // to the spool
    state.failNext = 0;
    await until(() => w.idle);
    // Five batches of two; trades are sent again without a probe, so each extra copy would be two rows more. The one
    // in flight landed from memory and once from its copy: 12 rows, not 18.
    expect(tables.get('trades')).toHaveLength(12);
    await w.close(1000);
  });

  it('writes trades through their own lane and sends a trades batch again without a probe (read once by id)', async () => {
    const { store, tables, state } = fakeStore();
    state.commitThenFail = 1;
    const w = make(store);
    w.start();
    w.enqueue(twoTrades());
    await until(() => w.idle);
    // It committed, the answer was lost: sent again, no probe; the copies are read once by (ts, trade_id).
    expect(tables.get('trades')?.map((l) => l.split('\t')[4])).toEqual(['t-1', 't-2', 't-1', 't-2']);
    expect(state.inserts).toBe(2);
    expect(state.probes).toBe(0);
    await w.close(1000);
  });

  it('stores a trades batch whose last trade a peer stored while the batch failed', async () => {
    const { store, tables, state } = fakeStore();
    // The peer's copy of t-2 (a hand-over's splice) is in the table; this batch's insert fails once, uncommitted.
    tables.set('trades', ['venue_b\tKX-1\t' + String(MARCH) + '\t9\tt-2\t0.5\t2\tbuy\tyes\t' + String(MARCH) + '\t']);
    state.failNext = 1;
    const w = make(store);
    w.start();
    w.enqueue(twoTrades());
    await until(() => w.idle);
    expect(tables.get('trades')?.map((l) => l.split('\t')[4])).toEqual(['t-2', 't-1', 't-2']);
    await w.close(1000);
  });

  it('re-inserts after a probe that finds nothing, and inserts once when nothing failed', async () => {
    const { store, tables, state } = fakeStore();
    state.failNext = 2;
    const w = make(store);
    w.start();
    w.enqueue(deltas(1));
    w.enqueue(deltas(10));
    await until(() => w.idle);
    expect(tables.get('deltas')).toHaveLength(4);
    expect(state.inserts).toBe(4);
    expect(state.probes).toBe(2);
    await w.close(1000);
  });

  it('moves a batch ClickHouse refuses as malformed to rejected/ instead of blocking, none of its rows counted written', async () => {
    const { store, state } = fakeStore();
    state.rejectNext = true;
    const rejected: SealedBatch[] = [];
    const written: number[] = [];
    const w = make(store, { onRejected: (b) => rejected.push(b), onWritten: (b) => written.push(b.rows) });
    w.start();
    w.enqueue(deltas(1));
    await until(() => w.idle);
    expect(rejected).toHaveLength(1);
    // The next batch lands: only its rows are written (recorder_rows_total), none of the refused one's.
    w.enqueue(deltas(11));
    await until(() => w.idle);
    expect(written).toEqual([2]);
    await w.close(1000);
  });

  it('spools beyond the memory bound, keeps order, and spools what is left at close', async () => {
    const { store, tables, state } = fakeStore();
    state.failNext = 1_000_000; // ClickHouse away
    const dir = tmp();
    const w = make(store, { spoolDir: dir, maxMemoryBytes: 100 });
    w.start();
    for (let i = 0; i < 5; i++) w.enqueue(deltas(i * 10 + 1));
    expect(w.spoolBytes()).toBeGreaterThan(0);
    await w.close(50);
    expect(tables.get('deltas')).toBeUndefined();
    // Next run: ClickHouse is back; the spool is replayed in order, each batch once.
    state.failNext = 0;
    const again = make(store, { spoolDir: dir });
    again.start();
    await until(() => again.spoolEmpty && again.idle);
    const seqs = (tables.get('deltas') ?? []).map((l) => Number(l.split('\t')[3]));
    expect(seqs).toEqual([1, 2, 11, 12, 21, 22, 31, 32, 41, 42]);
    await again.close(1000);
  });

  it('replays a spooled record under one query id in every life: a restart ends the insert a dead process left running before its probe', async () => {
    const dir = tmp();
    // First life: ClickHouse away; the batch is spooled at the stop.
    const away = fakeStore();
    away.state.failNext = 1_000_000;
    const first = make(away.store, { spoolDir: dir });
    first.start();
    first.enqueue(deltas(1));
    await until(() => away.state.inserts > 0);
    await first.close(50);
    // Second life: the replay's insert is sent and never answered (the process dies while ClickHouse commits it).
    const sent: string[] = [];
    const hanging: WriterStore = {
      ...away.store,
      insert: (_table, _source, o) => {
        sent.push(o?.queryId ?? '');
        return new Promise((_resolve, reject) => o?.signal?.addEventListener('abort', () => reject(new Error('gone'))));
      },
    };
    const second = make(hanging, { spoolDir: dir });
    second.start();
    await until(() => sent.length > 0);
    // Third life (the second never stopped): before its probe it makes sure that insert has ended, and its own
    // insert carries the same id.
    const back = fakeStore();
    const calls: string[] = [];
    const third = make(
      {
        ...back.store,
        ensureQueryEnded: async (id) => void calls.push(`ended? ${id}`),
        probeBatch: async (key) => (calls.push('probe'), back.store.probeBatch(key)),
        insert: (table, source, o) => (calls.push(`insert ${o?.queryId}`), back.store.insert(table, source, o)),
      },
      { spoolDir: dir },
    );
    third.start();
    await until(() => third.spoolEmpty && third.idle);
    expect(calls).toContain(`ended? ${sent[0]}`);
    expect(calls.indexOf(`ended? ${sent[0]}`)).toBeLessThan(calls.indexOf('probe'));
    expect(calls.at(-1)).toBe(`insert ${sent[0]}`);
    expect(back.tables.get('deltas')).toHaveLength(2);
    await third.close(1000);
    await second.close(50);
  });

  it('spools the batches waiting in memory before a younger one: a crash loses none older than what survives', async () => {
    const away = fakeStore();
    away.state.failNext = 1_000_000; // ClickHouse away: the first batch stays in memory, being retried
    const dir = tmp();
    const first = deltas(1);
    const w = make(away.store, { spoolDir: dir, maxMemoryBytes: first.bytes });
    w.start();
    w.enqueue(first);
    await until(() => away.state.inserts > 0); // in flight
    for (let i = 1; i < 4; i++) w.enqueue(deltas(i * 10 + 1)); // memory is full: to the spool
    // A crash now (nothing more of this process runs): the next one replays the spool alone, and finds every batch,
    // the one that was in flight included, in production order.
    const back = fakeStore();
    const again = make(back.store, { spoolDir: dir });
    again.start();
    await until(() => again.spoolEmpty && again.idle);
    const seqs = (back.tables.get('deltas') ?? []).map((l) => Number(l.split('\t')[3]));
    expect(seqs).toEqual([1, 2, 11, 12, 21, 22, 31, 32]);
    await again.close(1000);
    await w.close(0);
  });

  it('spools verification points like rows: the next run replays them (row format 4) after a probe', async () => {
    const { store, tables, state, formats } = fakeStore();
    state.failNext = 1_000_000; // ClickHouse away
    const dir = tmp();
    const w = make(store, { spoolDir: dir, maxMemoryBytes: 10 });
    w.start();
    const { sink, sealed } = collect();
    sink.verification('venue_b', 'KX-1', MARCH, 'checksum', MARCH + 5);
    sink.verification('venue_b', 'KX-1', MARCH - 900, 'rest_book', MARCH + 1000);
    sink.tick(0, true);
    expect(sealed.map((b) => [b.table, b.rows])).toEqual([['verifications', 2]]);
    w.enqueue(sealed[0] as SealedBatch);
    await w.close(50);
    expect(tables.get('verifications')).toBeUndefined();
    expect(readdirSync(path.join(dir, 'verifications')).length).toBeGreaterThan(0);
    state.failNext = 0;
    const probesBefore = state.probes;
    const again = make(store, { spoolDir: dir });
    again.start();
    await until(() => again.spoolEmpty && again.idle);
    expect(tables.get('verifications')).toEqual([
      `venue_b\tKX-1\t${MARCH}\tchecksum\t${MARCH + 5}`,
      `venue_b\tKX-1\t${MARCH - 900}\trest_book\t${MARCH + 1000}`,
    ]);
    expect(formats.at(-1)).toBe(4);
    expect(state.probes).toBe(probesBefore + 1);
    await again.close(1000);
  });

  it('replays a spool an older recorder left (row format 1) with the old columns, then inserts its own rows', async () => {
    const { store, tables, formats } = fakeStore();
    const dir = tmp();
    mkdirSync(path.join(dir, 'deltas'), { recursive: true });
    writeFileSync(path.join(dir, 'deltas', '100000000000.spool'), legacyRecord());
    const w = make(store, { spoolDir: dir });
    w.start();
    await until(() => w.spoolEmpty && w.idle);
    w.enqueue(deltas(10));
    await until(() => w.idle);
    expect(formats).toEqual([1, LATEST_ROW_FORMAT]);
    expect(tables.get('deltas')?.map((l) => l.split('\t').length)).toEqual([7, 7, 9, 9]);
    await w.close(1000);
  });

  it('asks the feeds to pause when the spool is full, and to resume when it drains', async () => {
    const { store, state } = fakeStore();
    state.failNext = 1_000_000;
    const pressure: boolean[] = [];
    const w = make(store, { maxMemoryBytes: 1024, maxSpoolBytes: 300, onPressure: (p) => pressure.push(p) });
    w.start();
    for (let i = 0; i < 10 && !w.isPaused; i++) w.enqueue(deltas(i * 10 + 1, 5));
    expect(pressure).toEqual([true]);
    state.failNext = 0;
    await until(() => w.idle);
    expect(pressure).toEqual([true, false]);
    await w.close(1000);
  });

  it('pauses the feeds at the memory bound when ClickHouse is away and the spool cannot be written, and loses nothing once they recover', async () => {
    const { store, tables, state } = fakeStore();
    state.failNext = 1_000_000; // ClickHouse away
    const diskFull = () => {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    };
    const append = jest.spyOn(TableSpool.prototype, 'append').mockImplementation(diskFull);
    const prepend = jest.spyOn(TableSpool.prototype, 'prepend').mockImplementation(diskFull);
    const pressure: boolean[] = [];
    let spoolFailures = 0;
    const w = make(store, {
      maxMemoryBytes: 4 * deltas(1).bytes,
      onPressure: (p) => pressure.push(p),
      onSpoolFailure: () => spoolFailures++,
    });
    try {
      w.start();
      // A feed reads until it is asked to pause.
      let sent = 0;
      let bytes = 0;
      while (sent < 1000 && !w.isPaused) {
        const batch = deltas(++sent * 10);
        bytes += batch.bytes;
        w.enqueue(batch);
      }
      expect(pressure).toEqual([true]);
      // What memory holds: its bound and the batch that went past it, not every batch the feeds could read.
      expect(sent).toBeLessThanOrEqual(5);
      expect(w.bufferedRows()).toEqual([2 * sent]);
      // The gauge recorder_buffer_bytes: past the bound.
      expect(w.bufferedBytes()).toBe(bytes);
      expect(bytes).toBeGreaterThan(4 * deltas(1).bytes);
      // Still failing at the lanes' retries: the pause holds.
      const failuresBefore = spoolFailures;
      await until(() => spoolFailures > failuresBefore && state.inserts >= 3);
      expect(pressure).toEqual([true]);
      // The spool works again, ClickHouse still away: the memory batches go there, and the feeds resume.
      append.mockRestore();
      prepend.mockRestore();
      await until(() => pressure.length > 1);
      expect(pressure).toEqual([true, false]);
      expect(w.spoolBytes()).toBeGreaterThan(0);
      // ClickHouse back: every row held, in order, once.
      state.failNext = 0;
      await until(() => w.idle);
      const seqs = (tables.get('deltas') ?? []).map((l) => Number(l.split('\t')[3]));
      expect(seqs).toEqual(Array.from({ length: sent }, (_, i) => [(i + 1) * 10, (i + 1) * 10 + 1]).flat());
    } finally {
      jest.restoreAllMocks();
      await w.close(1000);
    }
  });
});
