/**
 * The history service's access to ClickHouse: catalogue lookups (cached briefly in-process), ticker lists and
 * streamed window queries, each under a request's QueryScope (budget, cancellation, query ids for KILL).
 */
import type { ExchangeKey } from '@depthgate/auth';
import type { ClickHouseSettings } from '@clickhouse/client';
import { newQueryId, type ClickHouse } from '../clickhouse/client';
import { classifyClickHouseError } from '../clickhouse/errors';
import type { Sql } from '../clickhouse/literals';
import { catalogueEntryQuery, tickersQuery } from '../clickhouse/queries';
import type { RowKind } from '../clickhouse/schema';
import type { HistoryMetrics, QueryName, QueryOutcome } from './metrics';
import type { KindSpan } from './planner';
import type { QueryGate } from './query-gate';
import type { QueryScope } from './scope';

export interface CatalogueEntry {
  /** The ticker as stored (the request may have used another case). */
  ticker: string;
  spans: Partial<Record<RowKind, KindSpan>>;
}

export interface TickerSpan {
  ticker: string;
  firstTs: number;
  lastTs: number;
}

interface CachedEntry {
  entry: CatalogueEntry | null;
  expires: number;
}

const CACHE_MAX_ENTRIES = 20_000;

export class HistoryStore {
  private readonly cache = new Map<string, CachedEntry>();

  constructor(
    private readonly ch: ClickHouse,
    private readonly metrics: HistoryMetrics,
    private readonly cacheTtlMs: number,
    private readonly gate: QueryGate,
  ) {}

  /**
   * The catalogue entry of a ticker, matched exactly or, failing that, case-insensitively when exactly one stored
   * ticker matches. null when the exchange has no such ticker.
   */
  async catalogueEntry(exchange: ExchangeKey, ticker: string, scope: QueryScope): Promise<CatalogueEntry | null> {
    const key = `${exchange}\n${ticker}`;
    const now = Date.now();
    const cached = this.cache.get(key);
    if (cached && cached.expires > now) {
      this.metrics.catalogueCache.inc({ result: 'hit' });
      return cached.entry;
    }
    this.metrics.catalogueCache.inc({ result: 'miss' });
    const rows = await this.json<{
      ticker: string;
      kind_name: string;
      min_ts: string;
      max_ts: string;
      n_rows: string;
    }>('catalogue', catalogueEntryQuery(this.ch.db, exchange, ticker), scope);
    const names = [...new Set(rows.map((r) => r.ticker))];
    const name = names.includes(ticker) ? ticker : names.length === 1 ? names[0] : undefined;
    let entry: CatalogueEntry | null = null;
    if (name !== undefined) {
      entry = { ticker: name, spans: {} };
      for (const r of rows) {
        if (r.ticker !== name || (r.kind_name !== 'snapshot' && r.kind_name !== 'delta')) continue;
        entry.spans[r.kind_name] = { firstTs: Number(r.min_ts), lastTs: Number(r.max_ts), rows: Number(r.n_rows) };
      }
    }
    if (this.cacheTtlMs > 0) {
      if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.clear();
      this.cache.set(key, { entry, expires: now + this.cacheTtlMs });
    }
    return entry;
  }

  /** Tickers of an exchange passing both prefix filters, in byte order, with their data span. */
  async tickers(
    exchange: ExchangeKey,
    filters: { prefix?: string; allowedPrefixes?: readonly string[] | null },
    scope: QueryScope,
  ): Promise<TickerSpan[]> {
    const rows = await this.json<{ ticker: string; min_ts: string; max_ts: string }>(
      'tickers',
      tickersQuery(this.ch.db, exchange, filters),
      scope,
    );
    return rows.map((r) => ({ ticker: r.ticker, firstTs: Number(r.min_ts), lastTs: Number(r.max_ts) }));
  }

  /**
   * Runs one window query and hands its raw output to `onChunk` as it arrives; the next chunk is read only after
   * `onChunk` resolved (back-pressure reaches ClickHouse through the socket).
   */
  async streamQuery(
    query: Sql,
    scope: QueryScope,
    onChunk: (chunk: Buffer) => Promise<void> | void,
    options: { singleThread?: boolean } = {},
  ): Promise<void> {
    const queryId = newQueryId();
    const started = process.hrtime.bigint();
    scope.track(queryId);
    try {
      const result = await this.exec(query, queryId, scope, {
        // Small windows read a few granules: one thread does it with less overhead, and many run at once.
        ...(options.singleThread ? { max_threads: 1 } : {}),
      });
      try {
        for await (const chunk of result.stream as AsyncIterable<Buffer>) {
          const pending = onChunk(chunk);
          if (pending) await pending;
        }
      } finally {
        if (!result.stream.destroyed) result.stream.destroy();
      }
      this.observe('window', 'ok', started);
    } catch (err) {
      this.observe('window', this.outcome(err, scope), started);
      throw err;
    } finally {
      scope.untrack(queryId);
    }
  }

  private async json<T>(name: QueryName, query: Sql, scope: QueryScope): Promise<T[]> {
    const queryId = newQueryId();
    const started = process.hrtime.bigint();
    scope.track(queryId);
    try {
      const result = await this.exec(query, queryId, scope, {});
      const chunks: Buffer[] = [];
      for await (const chunk of result.stream as AsyncIterable<Buffer>) chunks.push(chunk);
      const rows = Buffer.concat(chunks)
        .toString('utf8')
        .split('\n')
        .filter((line) => line.length > 0)
        .map((line) => JSON.parse(line) as T);
      this.observe(name, 'ok', started);
      return rows;
    } catch (err) {
      this.observe(name, this.outcome(err, scope), started);
      throw err;
    } finally {
      scope.untrack(queryId);
    }
  }

  /**
   * Sends a query once the gate has a place for it, and frees the place when ClickHouse starts answering (or the
   * query failed before that).
   */
  private async exec(query: Sql, queryId: string, scope: QueryScope, settings: ClickHouseSettings) {
    const waitStarted = process.hrtime.bigint();
    this.metrics.queueWaiting.inc();
    let release: () => void;
    try {
      release = await this.gate.acquire(scope.signal, scope.queriesSent++ > 0);
    } finally {
      this.metrics.queueWaiting.dec();
    }
    this.metrics.queueWait.observe(Number(process.hrtime.bigint() - waitStarted) / 1e9);
    try {
      return await this.ch.data.exec({
        query: query.text,
        query_id: queryId,
        abort_signal: scope.signal,
        clickhouse_settings: { max_execution_time: scope.maxExecutionTimeSeconds(), ...settings },
      });
    } finally {
      release();
    }
  }

  private outcome(err: unknown, scope: QueryScope): QueryOutcome {
    if (scope.reason === 'timeout') return 'timeout';
    if (scope.reason === 'disconnect') return 'cancelled';
    return classifyClickHouseError(err).kind;
  }

  private observe(name: QueryName, outcome: QueryOutcome, started: bigint): void {
    this.metrics.queryDuration.observe({ query: name, outcome }, Number(process.hrtime.bigint() - started) / 1e9);
  }
}
