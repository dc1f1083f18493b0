/**
 * What the recorder does to ClickHouse, as named operations: its inserts (one batch = one atomic part), the probe
 * that tells whether an uncertain insert was written, the wait until an abandoned insert has ended, and where each
 * ticker's stored series ends. Reads run through a querier without a gate, each under a scope of its own time budget
 * (a probe that runs over it is killed, not left behind). All of it runs on ClickHouse 18.16 and current releases.
 */
import type { Readable } from 'node:stream';
import type { ExchangeKey } from '@depthgate/platforms';
import { insertTsv, type InsertOptions, type InsertTable } from '../inserts';
import { join, lit, sql, type Sql } from '../literals';
import { Querier } from '../querier';
import type { VerificationMethod } from '../schema';
import { connectionOf, type HistoryStore } from '../store';

/** The natural key of a batch's last row: present in the table ⇔ the (atomic) batch was written. */
export type ProbeKey =
  | { table: 'deltas'; exchange: ExchangeKey; ticker: string; ts: number; sequence: number }
  | { table: 'snapshots'; exchange: ExchangeKey; ticker: string; ts: number }
  | { table: 'trades'; exchange: ExchangeKey; ticker: string; ts: number; tradeId: string }
  | {
      table: 'gaps';
      exchange: ExchangeKey;
      ticker: string;
      fromTs: number;
      toTs: number;
      reason: string;
      detectedAt: number;
    }
  | {
      table: 'verifications';
      exchange: ExchangeKey;
      ticker: string;
      ts: number;
      method: VerificationMethod;
      detectedAt: number;
    };

export interface StoredTicker {
  lastTs: number;
  sequence: number;
}

export class RecorderStore {
  private readonly q: Querier;
  /**
   * A batch sent again is stored once by the tables themselves (cluster mode): each shard's replicated table drops a
   * block whose checksum it already holds (insert deduplication), so a retry needs no probe — the same bytes are
   * simply sent again. On one server (plain MergeTree, which 18.16 cannot deduplicate) the writer probes first.
   */
  readonly retriesDeduplicated: boolean;

  constructor(private readonly store: HistoryStore) {
    this.q = new Querier(store);
    this.retriesDeduplicated = connectionOf(store).cluster !== undefined;
  }

  /**
   * Streams one batch of TabSeparated rows (already encoded, see inserts.ts) into a table; resolves once ClickHouse
   * has committed it. The query id lets the writer make sure an abandoned attempt has ended before it probes.
   */
  insert(
    table: InsertTable,
    source: Readable | AsyncIterable<string | Buffer> | Iterable<string | Buffer>,
    options: InsertOptions = {},
  ): Promise<{ queryId: string }> {
    return insertTsv(this.store, table, source, options);
  }

  /** Whether the batch whose last row has this natural key is in its table (docs/history-internals.md, probe-before-retry). */
  async probeBatch(key: ProbeKey, timeoutMs = 10_000): Promise<boolean> {
    const db = this.q.db;
    const where = sql`exchange = ${lit.exchange(key.exchange)} AND ticker = ${lit.ticker(key.ticker)}`;
    let query: Sql;
    switch (key.table) {
      case 'deltas':
        query = sql`SELECT count() AS n FROM ${db}.deltas WHERE ${where} AND ts = ${lit.int(key.ts)} AND sequence = ${lit.int(key.sequence)}`;
        break;
      case 'snapshots':
        query = sql`SELECT count() AS n FROM ${db}.snapshots WHERE ${where} AND ts = ${lit.int(key.ts)}`;
        break;
      case 'trades':
        query = sql`SELECT count() AS n FROM ${db}.trades WHERE ${where} AND ts = ${lit.int(key.ts)} AND trade_id = ${lit.text(key.tradeId)}`;
        break;
      case 'gaps':
        query = sql`SELECT count() AS n FROM ${db}.gaps WHERE ${where} AND from_ts = ${lit.int(key.fromTs)} AND to_ts = ${lit.int(
          key.toTs,
        )} AND reason = ${lit.token(key.reason)} AND detected_at = ${lit.int(key.detectedAt)}`;
        break;
      case 'verifications':
        query = sql`SELECT count() AS n FROM ${db}.verifications WHERE ${where} AND ts = ${lit.int(key.ts)} AND method = ${lit.token(
          key.method,
        )} AND detected_at = ${lit.int(key.detectedAt)}`;
        break;
    }
    return (await this.count('probe', query, timeoutMs)) > 0;
  }

  /**
   * Makes sure an insert we gave up on is not still running on the server (it could commit after our probe said
   * "absent"): kills it and waits until it has left system.processes. Throws if ClickHouse cannot be asked.
   */
  async ensureQueryEnded(queryId: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const running = sql`SELECT count() AS n FROM system.processes WHERE query_id = ${lit.queryId(queryId)}`;
    for (let round = 0; ; round++) {
      if ((await this.count('running', running, 5000)) === 0) return;
      if (Date.now() > deadline) throw new Error(`insert ${queryId} is still running after KILL QUERY`);
      if (round === 0) await connectionOf(this.store).kill(queryId);
      await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** round)));
    }
  }

  /**
   * Where each ticker's stored series ends: the largest `ts` of its snapshots, deltas and gaps, and its largest
   * `sequence`. Reads the catalogue (a few rows per ticker), then the deltas at each ticker's last `ts` only (the
   * primary key narrows it to one granule). Tickers without rows are absent from the answer.
   */
  async storedTickers(
    exchange: ExchangeKey,
    tickers: readonly string[],
    timeoutMs = 30_000,
  ): Promise<Map<string, StoredTicker>> {
    const db = this.q.db;
    const out = new Map<string, StoredTicker>();
    for (let i = 0; i < tickers.length; i += 500) {
      const chunk = tickers.slice(i, i + 500);
      const list = join(
        chunk.map((t) => lit.ticker(t)),
        ', ',
      );
      // (Aliases never reuse a column's name: current ClickHouse's analyzer resolves those differently from 18.16.)
      const ends = await this.q.jsonWithin(
        timeoutMs,
        'stored-ends',
        sql`SELECT ticker, toString(kind) AS kind_name, maxMerge(last_ts) AS end_ts FROM ${db}.ticker_catalogue
WHERE exchange = ${lit.exchange(exchange)} AND ticker IN (${list}) GROUP BY ticker, kind
UNION ALL
SELECT ticker, 'trade' AS kind_name, maxMerge(last_ts) AS end_ts FROM ${db}.trades_catalogue
WHERE exchange = ${lit.exchange(exchange)} AND ticker IN (${list}) GROUP BY ticker
UNION ALL
SELECT ticker, 'gap' AS kind_name, max(to_ts) AS end_ts FROM ${db}.gaps
WHERE exchange = ${lit.exchange(exchange)} AND ticker IN (${list}) GROUP BY ticker`,
        (r) => ({ ticker: String(r.ticker), kind: String(r.kind_name), ts: Number(r.end_ts) }),
      );
      // Deltas and trades share a ticker's sequence: its largest is at the last ts of one of them.
      const last = { delta: new Map<string, number>(), trade: new Map<string, number>() };
      for (const { ticker, kind, ts } of ends) {
        const entry = out.get(ticker) ?? { lastTs: -1, sequence: 0 };
        entry.lastTs = Math.max(entry.lastTs, ts);
        out.set(ticker, entry);
        if (kind === 'delta' || kind === 'trade') last[kind].set(ticker, ts);
      }
      for (const [table, ends] of [
        ['deltas', last.delta],
        ['trades', last.trade],
      ] as const) {
        if (ends.size === 0) continue;
        const conditions = join(
          [...ends].map(([t, ts]) => sql`(ticker = ${lit.ticker(t)} AND ts = ${lit.int(ts)})`),
          ' OR ',
        );
        const sequences = await this.q.jsonWithin(
          timeoutMs,
          'stored-sequences',
          sql`SELECT ticker, max(sequence) AS last_sequence FROM ${db}.${lit.identifier(table)}
WHERE exchange = ${lit.exchange(exchange)} AND (${conditions}) GROUP BY ticker`,
          (r) => ({ ticker: String(r.ticker), sequence: Number(r.last_sequence) }),
        );
        for (const { ticker, sequence } of sequences) {
          const entry = out.get(ticker);
          if (entry && sequence > entry.sequence) entry.sequence = sequence;
        }
      }
    }
    return out;
  }

  private async count(name: string, query: Sql, timeoutMs: number): Promise<number> {
    const [first] = await this.q.jsonWithin(timeoutMs, name, query, (r) => Number(r.n));
    return first ?? 0;
  }
}
