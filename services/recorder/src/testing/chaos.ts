/**
 * The chaos harness of issue 27 (src/testing/: not part of the build): N recorder child processes (the built
 * entrypoint, as faults.int.test.ts and durability.int.test.ts run it) on the simulator's five feeds, one test
 * ClickHouse database and, in redundant mode, one Redis prefix; each recorder reaches ClickHouse through a TCP proxy
 * of its own that the test can cut and restore, and keeps a spool folder of its own. Actions: SIGKILL one and start it
 * again, a rolling restart (SIGTERM one, start it, wait for its /ready, then the next), one recorder cut from
 * ClickHouse until its spool is full, then restored until the spool has replayed. The end checks (`check`) read what
 * was recorded, directly and through the history API (started as a process), against the simulator:
 *
 * - gaps attributable to the recorders: no venue fault is injected, so no book or trades gap may lie after a ticker's
 *   first snapshot (counted by `stream:reason`: a run that expects some, e.g. today's `recorder_start`, says so);
 * - duplicated rows through the history API: deltas against the simulator's changes, trades by id, snapshots by
 *   (ts, side, price);
 * - every change and trade recorded once (checks.ts), rule-7 books equal to the simulator's at random moments of every
 *   venue-clocked exchange (checks.ts' per ticker, and `moments` more per exchange over the run), Gemini's
 *   (receive-clocked) at the quiet end;
 * - at every `handovers` row's S − 1, S and S + 1 the rule-7 book equals the simulator's (skipped, and said so, when
 *   the table does not exist: the harness runs on code without redundancy).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, type WriteStream } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { ExchangeKey } from '@depthgate/platforms';
import type { Simulator } from '@depthgate/venue-sim';
import { formatDecimal, parseDecimal } from '@depthgate/feeds';
import { Rng } from '@depthgate/service-kit';
import { freePort, repoRoot, testRedisUrl, uniqueName, waitFor } from '@depthgate/test-utils';
import {
  createRecorderHarness,
  simBookAt,
  simChanges,
  sleep,
  startHistoryProcess,
  type HistoryApi,
  type RecorderHarness,
} from './harness';
import {
  expectEveryChangeOnce,
  expectEveryTradeOnce,
  expectGeminiAt,
  expectRule7,
  firstSnapshot,
  gapsOf,
  geminiRows,
  quietMoment,
  sorted,
} from './checks';
import { rebuild, type FlatBook, type Row } from './support';

type SimOptions = NonNullable<Parameters<typeof createRecorderHarness>[0]>['sim'];

/** The five recorded exchanges; Gemini (venue_c) stamps rows on receipt, the others with the venue's time. */
export const CHAOS_EXCHANGES: ExchangeKey[] = ['venue_b', 'venue_c', 'venue_a_us', 'venue_a_clob', 'venue_d'];
export const CHAOS_VENUE_CLOCK: ExchangeKey[] = ['venue_b', 'venue_a_us', 'venue_a_clob', 'venue_d'];
/** Exchanges whose missed trades cannot all be read back (no or partial trade history): trades gaps are possible. */
const TRADE_GAPS_POSSIBLE = new Set<ExchangeKey>(['venue_a_us', 'venue_a_clob']);

// ---------------------------------------------------------------------------------------------------------------
// A TCP proxy that can be cut

/** A TCP proxy to `target` (host:port): `cut()` closes every open connection and resets every new one until `restore()`. */
export interface CutProxy {
  readonly port: number;
  readonly cutNow: boolean;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startCutProxy(target: { host: string; port: number }): Promise<CutProxy> {
  const open = new Set<net.Socket>();
  let cutNow = false;
  const server = net.createServer((client) => {
    if (cutNow) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target);
    open.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const port = await freePort();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    port,
    get cutNow() {
      return cutNow;
    },
    cut() {
      cutNow = true;
      for (const s of open) s.resetAndDestroy();
      open.clear();
    },
    restore() {
      cutNow = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The recorders

export interface ChaosOptions {
  /** How many recorder processes (2 for redundancy; 1 runs the harness on today's code). */
  recorders: number;
  /** Give the recorders a Redis prefix of their own (`RECORDER_REDIS_URL`): redundant mode. Default: recorders > 1. */
  redis?: boolean;
  /** Each recorder's spool bound (`RECORDER_SPOOL_MAX_BYTES`; the ClickHouse cut fills it). Default 1 MiB. */
  spoolMaxBytes?: number;
  sim?: SimOptions;
  /** More environment for every recorder. */
  env?: Record<string, string>;
  /** Where each recorder's log goes (a file per recorder); default a temporary folder, removed unless kept. */
  logDir?: string;
  /**
   * A ClickHouse cluster instead of the test server (`*.cluster.test.ts`): the server the recorders (each through its
   * proxy) and the history API talk to, and the cluster's name (CLICKHOUSE_CLUSTER).
   */
  cluster?: { url: string; name: string };
}

export interface ChaosRecorder {
  readonly id: string;
  readonly spoolDir: string;
  readonly proxy: CutProxy;
  child?: ChildProcess;
  url?: string;
  /** How many times it was started. */
  starts: number;
}

/** What happened, when (the report's timeline). */
export interface ChaosEvent {
  at: number;
  recorder: string;
  action: 'start' | 'sigkill' | 'sigterm' | 'cut' | 'spool-full' | 'restore' | 'replayed';
  detail?: string;
}

export interface ChaosReport {
  /** Book and trades gap rows after their ticker's first snapshot, by `stream:reason`. */
  recorderGaps: Record<string, number>;
  /**
   * Up to three gaps of each `stream:reason`: when each started and when it was written (seconds after the first
   * recorder started), and its ticker's hand-overs within 30 s of it (which event wrote it).
   */
  gapSamples: string[];
  /** Rows read through the history API beyond one copy: deltas (vs the simulator's changes), trades (by id), snapshots (by ts, side, price). */
  duplicates: { deltas: number; trades: number; snapshots: number };
  /** Up to ten duplicated deltas, with what was duplicated. */
  duplicateSamples: string[];
  /** `duplicates.deltas` by exchange (only those with some). */
  deltaDuplicatesByExchange: Partial<Record<ExchangeKey, number>>;
  /**
   * Receive-clock tickers whose venue changes were counted from before their first snapshot's stamp (the venue had
   * changed the book while the snapshot was on its way; `receiveClockStart`).
   */
  receiveClockStarts: number;
  /** Rows read through the API, per kind. */
  readRows: { deltas: number; trades: number; snapshots: number };
  /** Rule-7 moments compared (random and event moments; handover moments apart). */
  rule7Moments: number;
  /**
   * `handovers` rows and the moments (S − 1, S, S + 1) compared at them; per kind, how many, and from the old owner's
   * last row (S − 1) to the new owner's decision (`detected_at`), p50 and max in ms: how long the ticker's newest rows
   * waited for a writer. `undefined` without the table.
   */
  handovers?: {
    rows: number;
    moments: number;
    byKind: Record<string, { n: number; switchMsP50: number; switchMsMax: number }>;
  };
  /** First failure of each remaining check (changes once, trades once, rule 7, Gemini at the quiet end), if any. */
  failures: string[];
  events: ChaosEvent[];
  /** When the first recorder started (epoch ms): the origin of the gap samples' and the summary's seconds. */
  startedAt: number;
}

/** `ts` as seconds after `start` (the first recorder's start), as the report prints times. */
function secondsAfter(start: number, ts: number): string {
  return `${((ts - start) / 1000).toFixed(1)} s`;
}

/** The report as printed by the chaos tests: every event with its seconds after the first recorder started. */
export function chaosSummary(report: ChaosReport): string {
  const events = report.events.map(
    (e) => `${secondsAfter(report.startedAt, e.at)} ${e.recorder} ${e.action}${e.detail ? ` ${e.detail}` : ''}`,
  );
  return JSON.stringify({ ...report, events }, null, 1);
}

interface Metrics {
  spoolBytes: number;
  bufferRows: number;
  paused: number;
}

/** A metric family's sum over its labels, from Prometheus text. */
function metricSum(text: string, name: string, label?: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || (line[name.length] !== ' ' && line[name.length] !== '{')) continue;
    if (label !== undefined && !line.includes(label)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

export class Chaos {
  readonly events: ChaosEvent[] = [];
  readonly recorders: ChaosRecorder[] = [];
  readonly redisPrefix: string | undefined;
  private readonly logs: WriteStream[] = [];
  private readonly ownLogDir: boolean;
  readonly logDir: string;
  private started = 0;

  private constructor(
    readonly h: RecorderHarness,
    readonly options: ChaosOptions,
    private readonly childEnv: Record<string, string>,
  ) {
    this.redisPrefix = (options.redis ?? options.recorders > 1) ? `${uniqueName('chaos')}:` : undefined;
    this.ownLogDir = options.logDir === undefined;
    this.logDir = options.logDir ?? mkdtempSync(path.join(os.tmpdir(), 'dg-chaos-logs-'));
  }

  /** The harness (simulator, database) and one proxy and spool folder per recorder; nothing started yet. */
  static async create(options: ChaosOptions): Promise<Chaos> {
    const h = await createRecorderHarness({
      sim: { updatesPerSecond: 120, ...options.sim },
      ...(options.cluster
        ? { clickhouseUrl: options.cluster.url, env: { CLICKHOUSE_CLUSTER: options.cluster.name } }
        : {}),
    });
    const tickers = (e: ExchangeKey) => h.sim.books.tickers(e).join(',');
    const spoolMax = options.spoolMaxBytes ?? 1024 * 1024;
    const env: Record<string, string> = {
      LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? 'info',
      RECORDER_EXCHANGES: CHAOS_EXCHANGES.join(','),
      RECORDER_VENUE_A_CLOB_TICKERS: tickers('venue_a_clob'),
      RECORDER_VENUE_D_TICKERS: tickers('venue_d'),
      // Small bounds: a ClickHouse cut fills the memory buffer, then the spool, within seconds.
      RECORDER_BUFFER_MAX_BYTES: String(128 * 1024),
      RECORDER_SPOOL_MAX_BYTES: String(spoolMax),
      RECORDER_SPOOL_FILE_BYTES: String(64 * 1024),
      ...options.env,
    };
    const chaos = new Chaos(h, options, env);
    const ch = new URL(h.env.CLICKHOUSE_URL as string);
    for (let i = 0; i < options.recorders; i++) {
      const proxy = await startCutProxy({ host: ch.hostname, port: Number(ch.port || 80) });
      chaos.recorders.push({
        id: `rec-${i}`,
        spoolDir: mkdtempSync(path.join(os.tmpdir(), `dg-chaos-spool-${i}-`)),
        proxy,
        starts: 0,
      });
      chaos.logs.push(createWriteStream(path.join(chaos.logDir, `rec-${i}.log`)));
    }
    return chaos;
  }

  /** Seconds from the first recorder's start to `ts` (the simulator's clock is the wall clock). */
  private sinceStart(ts: number): string {
    return secondsAfter(this.started, ts);
  }

  private note(recorder: ChaosRecorder, action: ChaosEvent['action'], detail?: string): void {
    this.events.push({ at: Date.now(), recorder: recorder.id, action, ...(detail ? { detail } : {}) });
  }

  /** Starts recorder `i` (its proxy in front of ClickHouse, its spool, its id) and waits for its /ready. */
  async start(i: number): Promise<void> {
    const r = this.recorders[i] as ChaosRecorder;
    if (r.child && r.child.exitCode === null && r.child.signalCode === null) throw new Error(`${r.id} is running`);
    const port = await freePort();
    const ch = new URL(this.h.env.CLICKHOUSE_URL as string);
    ch.host = `127.0.0.1:${r.proxy.port}`;
    const env: Record<string, string> = {
      ...this.h.env,
      ...this.childEnv,
      CLICKHOUSE_URL: ch.toString().replace(/\/$/, ''),
      RECORDER_SPOOL_DIR: r.spoolDir,
      RECORDER_PORT: String(port),
      RECORDER_ID: r.id,
    };
    if (this.redisPrefix !== undefined) {
      env.RECORDER_REDIS_URL = testRedisUrl();
      env.RECORDER_REDIS_PREFIX = this.redisPrefix;
    }
    const log = this.logs[i] as WriteStream;
    const child = spawn(process.execPath, [path.join(repoRoot, 'services/recorder/dist/main.js')], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    r.child = child;
    r.url = `http://127.0.0.1:${port}`;
    r.starts++;
    if (this.started === 0) this.started = Date.now();
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`${r.id} exited (${child.exitCode}); log: ${this.logDir}`);
        const res = await fetch(`${r.url}/ready`).catch(() => undefined);
        return res?.status === 200;
      },
      { timeoutMs: 150_000, intervalMs: 100, what: `${r.id} to be ready` },
    );
    this.note(r, 'start', `start ${r.starts}`);
  }

  async startAll(): Promise<void> {
    // At once: which one owns what is the redundancy's business, not the test's.
    await Promise.all(this.recorders.map((_, i) => this.start(i)));
  }

  private async signal(i: number, signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    const r = this.recorders[i] as ChaosRecorder;
    const child = r.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) throw new Error(`${r.id} is not running`);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    this.note(r, signal === 'SIGKILL' ? 'sigkill' : 'sigterm');
    child.kill(signal);
    await exited;
  }

  /** SIGTERM recorder `i` (it hands its tickers to a live peer, then stops) and wait for its exit; it stays down. */
  async terminate(i: number): Promise<void> {
    await this.signal(i, 'SIGTERM');
  }

  /** SIGKILL recorder `i`, leave it down `downMs`, start it again (waits for /ready). */
  async killAndRestart(i: number, downMs = 2000): Promise<void> {
    await this.signal(i, 'SIGKILL');
    await sleep(downMs);
    await this.start(i);
  }

  /** SIGTERM one recorder, start it again and wait for its /ready; then the next. */
  async rollingRestart(): Promise<void> {
    for (let i = 0; i < this.recorders.length; i++) {
      await this.signal(i, 'SIGTERM');
      await this.start(i);
    }
  }

  /** The recorder's own metrics (its /metrics). */
  async metrics(i: number): Promise<Metrics> {
    const r = this.recorders[i] as ChaosRecorder;
    const text = await (await fetch(`${r.url}/metrics`)).text();
    return {
      spoolBytes: metricSum(text, 'recorder_spool_bytes'),
      bufferRows: metricSum(text, 'recorder_buffer_rows'),
      paused: metricSum(text, 'recorder_feeds_paused'),
    };
  }

  /**
   * The running recorder that owns the most tickers (its `recorder_role{role="owner"}`): the one whose ClickHouse cut
   * fills a spool (a standby writes nothing).
   */
  async owner(): Promise<number> {
    let best = 0;
    let most = -1;
    for (let i = 0; i < this.recorders.length; i++) {
      const r = this.recorders[i] as ChaosRecorder;
      if (!r.child || r.child.exitCode !== null || r.child.signalCode !== null) continue;
      const text = await (await fetch(`${r.url}/metrics`)).text();
      const owned = metricSum(text, 'recorder_role', 'role="owner"');
      if (owned > most) [best, most] = [i, owned];
    }
    return best;
  }

  /**
   * Cuts recorder `i` from ClickHouse until its spool is full (its bytes at the bound, or its feeds paused for it),
   * holds the cut `holdMs` more, restores it and waits until the spool has replayed. Returns the spool's peak.
   */
  async cutUntilSpoolFull(i: number, o: { holdMs?: number; timeoutMs?: number } = {}): Promise<number> {
    const r = this.recorders[i] as ChaosRecorder;
    const max = Number(this.childEnv.RECORDER_SPOOL_MAX_BYTES);
    r.proxy.cut();
    this.note(r, 'cut');
    let peak = 0;
    await waitFor(
      async () => {
        const m = await this.metrics(i);
        peak = Math.max(peak, m.spoolBytes);
        return m.spoolBytes >= max || m.paused > 0;
      },
      { timeoutMs: o.timeoutMs ?? 120_000, intervalMs: 200, what: `${r.id}'s spool to fill` },
    );
    this.note(r, 'spool-full', `${peak} bytes`);
    await sleep(o.holdMs ?? 2000);
    r.proxy.restore();
    this.note(r, 'restore');
    await waitFor(async () => (await this.metrics(i)).spoolBytes === 0, {
      timeoutMs: 120_000,
      intervalMs: 200,
      what: `${r.id}'s spool to replay`,
    });
    this.note(r, 'replayed');
    return peak;
  }

  /**
   * The end of a run: the books stand still, everything in flight is written (every running recorder's buffer and
   * spool empty), the trades' audits read their last windows, and every recorder stops with SIGTERM (one after the
   * other). Returns the quiet moment (the checks' end) and Gemini's books at it.
   */
  async finish(): Promise<{ at: number; gemini: Map<string, FlatBook> }> {
    const quiet = await quietMoment(this.h);
    const running = this.recorders.map((r, i) => ({ r, i })).filter(({ r }) => r.child?.exitCode === null);
    await waitFor(
      async () => {
        for (const { i } of running) {
          const m = await this.metrics(i);
          if (m.spoolBytes > 0 || m.bufferRows > 0) return false;
        }
        return true;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'everything written' },
    );
    // Two trade audit intervals: the last windows read back.
    await sleep(2 * Number(this.h.env.RECORDER_TRADES_AUDIT_INTERVAL_MS ?? 1500) + 500);
    for (const { i, r } of running)
      if (r.child?.exitCode === null && r.child.signalCode === null) await this.signal(i, 'SIGTERM');
    return quiet;
  }

  /** Every end check (see the module's comment); failures are collected, not thrown, so a report is always whole. */
  async check(
    end: { at: number; gemini: Map<string, FlatBook> },
    o: { seed?: number; moments?: number } = {},
  ): Promise<ChaosReport> {
    const seed = o.seed ?? 27;
    const failures: string[] = [];
    const attempt = async (what: string, fn: () => Promise<unknown>) => {
      try {
        await fn();
      } catch (err) {
        failures.push(`${what}: ${(err as Error).message.split('\n').slice(0, 4).join(' | ')}`);
      }
    };
    const recorderGaps: Record<string, number> = {};
    const gapSamples: string[] = [];
    const rowsOf = new Map<string, Row[]>();
    const table = await this.h.db.handovers();
    for (const exchange of CHAOS_EXCHANGES) {
      for (const ticker of this.h.sim.books.tickers(exchange)) {
        const rows = await this.h.rows(exchange, ticker);
        rowsOf.set(`${exchange} ${ticker}`, rows);
        const first = firstSnapshot(rows);
        for (const g of rows.filter((r) => r.kind === 'gap' && (r.toTs as number) > first)) {
          const k = `${g.stream ?? 'book'}:${g.reason}`;
          recorderGaps[k] = (recorderGaps[k] ?? 0) + 1;
          // The first few of each kind with where they are, to tell which event made them.
          if ((recorderGaps[k] ?? 0) <= 3) {
            // When it was written, and the ticker's hand-overs near it: which recorder, and which event, wrote it.
            const near = (table ?? [])
              .filter((ho) => ho.exchange === exchange && ho.ticker === ticker)
              .filter((ho) => Math.abs(ho.ts - (g.fromTs as number)) <= 30_000)
              .map((ho) => `${ho.kind} ${ho.from_term}→${ho.to_term} S=${ho.ts} (${this.sinceStart(ho.ts)})`);
            gapSamples.push(
              `${k} ${exchange} ${ticker} ${g.fromTs as number}..${g.toTs as number} (${this.sinceStart(g.fromTs as number)}, ` +
                `written ${this.sinceStart(g.detectedAt as number)}; hand-overs near it: ${near.join(', ') || 'none'})`,
            );
          }
        }
      }
    }

    const api = await startHistoryProcess(this.h);
    const duplicates = { deltas: 0, trades: 0, snapshots: 0 };
    const duplicateSamples: string[] = [];
    const deltaDuplicatesByExchange: Partial<Record<ExchangeKey, number>> = {};
    const readRows = { deltas: 0, trades: 0, snapshots: 0 };
    let receiveClockStarts = 0;
    try {
      const from = this.started - 60_000;
      for (const exchange of CHAOS_EXCHANGES) {
        for (const ticker of this.h.sim.books.tickers(exchange)) {
          const rows = rowsOf.get(`${exchange} ${ticker}`) ?? [];
          const first = firstSnapshot(rows);
          const gaps = gapsOf(rows);
          const read = (kind: string) => apiRows(api, exchange, ticker, kind, from, end.at);
          // Deltas: beyond the simulator's count of the same change at the same ts (Gemini: its receive clock, so
          // the count of each change over the run), and no (ts, sequence) twice.
          const deltas = (await read('deltas')).filter((d) => Date.parse(d.ts as string) > first);
          const before = duplicates.deltas;
          readRows.deltas += deltas.length;
          const clocked = exchange !== 'venue_c';
          const key = (ts: number, k: string) => (clocked ? `${ts} ${k}` : k);
          // On a receive clock the venue's changes count from the moment the first snapshot shows, not from its stamp.
          const since = clocked ? first : receiveClockStart(this.h.sim, exchange, ticker, rows, first);
          if (since < first) receiveClockStarts++;
          const changes = simChanges(this.h.sim, exchange, ticker);
          const emitted = new Map<string, number>();
          for (const c of changes) {
            if (c.ts <= since || c.ts > end.at) continue;
            emitted.set(key(c.ts, c.key), (emitted.get(key(c.ts, c.key)) ?? 0) + 1);
          }
          const got = new Map<string, number>();
          /** Where each counted key's rows are (ms of ts), for the samples. */
          const rowsAt = new Map<string, number[]>();
          const seqs = new Set<string>();
          for (const d of deltas) {
            const ts = Date.parse(d.ts as string);
            const seq = `${ts} ${String(d.sequence)}`;
            if (seqs.has(seq)) {
              duplicates.deltas++;
              if (duplicateSamples.length < 10) duplicateSamples.push(`${exchange} ${ticker} (ts, sequence) ${seq}`);
            }
            seqs.add(seq);
            if (gaps.some((g) => ts >= g.from && ts <= g.to)) continue;
            const k = key(ts, `${d.side as string} ${canonical(d.price)} ${canonical(d.quantity_delta)}`);
            got.set(k, (got.get(k) ?? 0) + 1);
            const at = rowsAt.get(k);
            if (at === undefined) rowsAt.set(k, [ts]);
            else at.push(ts);
          }
          for (const [k, n] of got) {
            const want = emitted.get(k) ?? 0;
            if (want > 0 && n > want) {
              duplicates.deltas += n - want;
              if (duplicateSamples.length < 10) {
                // Where they were, in ms after the first snapshot: the rows and (receive clock) the venue's changes.
                const at = (list: readonly number[]) => list.map((t) => t - first).join(',');
                const venueAt = clocked
                  ? ''
                  : `, venue at ${at(changes.filter((c) => c.key === k && c.ts <= end.at).map((c) => c.ts))}`;
                duplicateSamples.push(
                  `${exchange} ${ticker} ${k} ×${n} (emitted ×${want}) rows at ${at(rowsAt.get(k) ?? [])}${venueAt}`,
                );
              }
            }
          }
          if (duplicates.deltas > before) {
            deltaDuplicatesByExchange[exchange] =
              (deltaDuplicatesByExchange[exchange] ?? 0) + duplicates.deltas - before;
          }
          // Trades: each id once.
          const trades = await read('trades');
          readRows.trades += trades.length;
          const ids = new Set<string>();
          for (const t of trades) {
            if (ids.has(t.trade_id as string)) duplicates.trades++;
            ids.add(t.trade_id as string);
          }
          // Snapshots: each (ts, side, price) once.
          const snaps = await read('snapshots');
          readRows.snapshots += snaps.length;
          const levels = new Set<string>();
          for (const s of snaps) {
            const k = `${s.ts as string} ${s.side as string} ${canonical(s.price)}`;
            if (levels.has(k)) duplicates.snapshots++;
            levels.add(k);
          }
        }
      }
    } finally {
      await api.close();
    }

    let rule7Moments = 0;
    for (const [i, exchange] of CHAOS_VENUE_CLOCK.entries()) {
      await attempt(`rule 7 ${exchange}`, async () => {
        rule7Moments += await expectRule7(this.h, exchange, end.at, seed + i);
      });
      await attempt(`every change once ${exchange}`, () => expectEveryChangeOnce(this.h, exchange, end.at));
    }
    // Besides expectRule7's moments per ticker: `moments` random (ticker, moment) pairs per venue-clocked exchange
    // over the whole run, outside the ticker's gaps.
    const rng = new Rng(seed, 'chaos moments');
    for (const exchange of CHAOS_VENUE_CLOCK) {
      const tickers = this.h.sim.books.tickers(exchange);
      let wrong = 0;
      let first = '';
      for (let k = 0; k < (o.moments ?? 200) && tickers.length > 0; k++) {
        const ticker = tickers[Math.floor(rng.float() * tickers.length)] as string;
        const rows = rowsOf.get(`${exchange} ${ticker}`) ?? [];
        const start = firstSnapshot(rows);
        if (!Number.isFinite(start)) continue;
        const t = start + Math.floor(rng.float() * (end.at - start));
        if (gapsOf(rows).some((g) => t >= g.from && t < g.to)) continue;
        const got = JSON.stringify(sorted(rebuild(rows, t)));
        if (got !== JSON.stringify(sorted(simBookAt(this.h.sim, exchange, ticker, t)))) {
          wrong++;
          first ||= `${ticker} at ${t}`;
        }
        rule7Moments++;
      }
      if (wrong > 0) failures.push(`rule 7 at random moments ${exchange}: ${wrong} books differ (first: ${first})`);
    }
    await attempt('Gemini at the quiet end', async () => expectGeminiAt(await geminiRows(this.h), end));
    for (const exchange of CHAOS_EXCHANGES) {
      await attempt(`every trade once ${exchange}`, () =>
        expectEveryTradeOnce(this.h, exchange, end.at, { gaps: TRADE_GAPS_POSSIBLE.has(exchange) }),
      );
    }

    let handovers: ChaosReport['handovers'];
    if (table !== undefined) {
      let moments = 0;
      for (const ho of table) {
        if (!CHAOS_VENUE_CLOCK.includes(ho.exchange) || ho.ts > end.at) continue;
        const rows = rowsOf.get(`${ho.exchange} ${ho.ticker}`) ?? [];
        const gaps = gapsOf(rows);
        for (const t of [ho.ts - 1, ho.ts, ho.ts + 1]) {
          if (gaps.some((g) => t >= g.from && t < g.to)) continue;
          const got = sorted(rebuild(rows, t));
          const want = sorted(simBookAt(this.h.sim, ho.exchange, ho.ticker, t));
          if (JSON.stringify(got) !== JSON.stringify(want)) {
            failures.push(
              `handover ${ho.exchange} ${ho.ticker} S=${ho.ts} (${ho.from_term}→${ho.to_term}): book at ${t} differs`,
            );
          }
          moments++;
        }
      }
      const byKind: NonNullable<ChaosReport['handovers']>['byKind'] = {};
      for (const kind of new Set(table.map((ho) => ho.kind))) {
        const ms = table
          .filter((ho) => ho.kind === kind)
          .map((ho) => ho.detected_at - (ho.ts - 1))
          .sort((a, b) => a - b);
        byKind[kind] = {
          n: ms.length,
          switchMsP50: ms[Math.floor((ms.length - 1) / 2)] ?? 0,
          switchMsMax: ms.at(-1) ?? 0,
        };
      }
      handovers = { rows: table.length, moments, byKind };
    }
    return {
      recorderGaps,
      gapSamples,
      duplicates,
      duplicateSamples,
      deltaDuplicatesByExchange,
      receiveClockStarts,
      readRows,
      rule7Moments,
      handovers,
      failures,
      events: this.events,
      startedAt: this.started,
    };
  }

  /** Kills whatever still runs, closes the proxies, removes the spools (and the logs unless `keepLogs`). */
  async close(keepLogs = false): Promise<void> {
    for (const r of this.recorders) {
      if (r.child && r.child.exitCode === null && r.child.signalCode === null) {
        const exited = new Promise((resolve) => r.child?.once('exit', resolve));
        r.child.kill('SIGKILL');
        await exited;
      }
      await r.proxy.close();
      rmSync(r.spoolDir, { recursive: true, force: true });
    }
    for (const l of this.logs) l.end();
    if (this.ownLogDir && !keepLogs) rmSync(this.logDir, { recursive: true, force: true });
    await this.h.close();
  }
}

const canonical = (d: unknown) => formatDecimal(parseDecimal(String(d)));

/**
 * On a receive clock (Gemini), the simulator's moment that a ticker's first recorded snapshot shows: the latest of its
 * events at or before `first` (the snapshot's stamp, when it arrived) after which the simulator's book is the
 * snapshot's; `first` when none within RECEIVE_LAG_MS is. The venue's changes made between sending the snapshot and
 * its arrival reach the recorder after it, stamped after `first`: counted from `first`, each was one more than the
 * venue made whenever the venue made the same change again later (CI58's one duplicated Gemini delta; two quiet runs
 * of the one-recorder case had such a change in one ticker of six, and none).
 */
function receiveClockStart(sim: Simulator, exchange: ExchangeKey, ticker: string, rows: readonly Row[], first: number) {
  const snapshot = JSON.stringify(
    sorted(
      rebuild(
        rows.filter((r) => r.kind === 'snapshot'),
        first,
      ),
    ),
  );
  const events = sim.books.events(exchange, ticker).filter((e) => e.ts <= first && e.ts > first - RECEIVE_LAG_MS);
  for (let i = events.length - 1; i >= 0; i--) {
    const ts = (events[i] as { ts: number }).ts;
    // The latest event already gives the snapshot's book: nothing happened between it and `first`.
    if (JSON.stringify(sorted(simBookAt(sim, exchange, ticker, ts))) === snapshot)
      return i === events.length - 1 ? first : ts;
  }
  return first;
}

/** How long before its arrival `receiveClockStart` looks for the moment a snapshot was sent. */
const RECEIVE_LAG_MS = 5000;

/** Every row of a kind of a ticker in [from, to] through the history API's NDJSON stream (the end line dropped). */
async function apiRows(
  api: HistoryApi,
  exchange: ExchangeKey,
  ticker: string,
  kind: string,
  from: number,
  to: number,
): Promise<Record<string, unknown>[]> {
  const res = await fetch(
    `${api.url}/api/${exchange}/${kind}/${encodeURIComponent(ticker)}?format=ndjson&start_ts=${from}&end_ts=${to}`,
  );
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${kind} ${exchange} ${ticker}: ${res.status} ${text.slice(0, 200)}`);
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((r) => typeof r.ts === 'string');
}
