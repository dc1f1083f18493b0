/**
 * What the recorder does to ClickHouse, as named operations: its inserts (one batch = one atomic part), the probe
 * that tells whether an uncertain insert was written, the wait until an abandoned insert has ended, and where each
 * ticker's stored series ends; for redundant recording, the landed ends a takeover splices at, the end of a deposed
 * term's inserts, and the hand-overs. Reads run through a querier without a gate, each under a scope of its own time budget
 * (a probe that runs over it is killed, not left behind). All of it runs on ClickHouse 18.16 and current releases.
 */
import type { Readable } from 'node:stream';
import type { ExchangeKey } from '@depthgate/platforms';
import {
  insertHandoverRows,
  insertTsv,
  recorderQueryPrefix,
  type HandoverRow,
  type InsertOptions,
  type InsertTable,
} from '../inserts';
import { join, lit, sql, type Side, type Sql } from '../literals';
import { classifyClickHouseError } from '../errors';
import { Querier } from '../querier';
import type { HandoverKind, VerificationMethod } from '../schema';
import { BOOK_GAPS, trimDecimal } from './order-books';
import { tickerCondition } from './conditions';
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
  /** The largest ts of any of its rows (-1: none). */
  lastTs: number;
  /** The largest sequence of its deltas and trades (0: none). */
  sequence: number;
  /** Where its book ends: the largest ts of its deltas and snapshots and `to_ts` of its book gaps (-1: none). */
  bookTs: number;
  /** Where its trades end: the largest ts of its trades and `to_ts` of its trades gaps (-1: none). */
  tradesTs: number;
  /** Where its stored series begins: the smallest ts of its rows and `from_ts` of its gaps (-1: none). */
  firstTs: number;
  /** Its stored trades from its last trade's ts − `tradesBackMs` to it (storedTickers' option; default: that ms). */
  tradesAtEnd: Array<{ id: string; ts: number }>;
}

/** A landed delta at a ticker's last landed ms (landedEnds). */
export interface LandedDelta {
  side: Side;
  /** The stored decimal as text without trailing zeros (`0.51`, `-12.5`, `3`). */
  price: string;
  quantityDelta: string;
  sequence: number;
}

/** A level of a landed snapshot (landedBook). */
export interface LandedLevel {
  side: Side;
  price: string;
  quantity: string;
}

/** Where a ticker's landed rows end (landedEnds). */
export interface LandedEnd {
  /** The largest ts of its book rows (deltas, snapshots, book gaps' to_ts); -1: none. */
  lastTs: number;
  /** The largest sequence of its deltas and trades; 0: none. */
  sequence: number;
  /** The largest ts of its trades; -1: none. */
  lastTradeTs: number;
  /** Its deltas at `lastTs`, in sequence order. */
  deltasAtLast: LandedDelta[];
}

export class RecorderStore {
  private readonly q: Querier;
  /**
   * A batch sent again is stored once by the tables themselves (cluster mode): each shard's replicated table drops a
   * block whose checksum it already holds among its last 10,000 (insert deduplication, layout.ts
   * DEDUPLICATION_SETTINGS), so a retry needs no probe — the same bytes are simply sent again. On one server (plain
   * MergeTree, which 18.16 cannot deduplicate) the writer probes first.
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
   *
   * On a cluster the shared address (a Service over every server) may lead this request to a server the insert is not
   * on, which would answer that it has ended: every server is asked instead, as killWriter does (endOnCluster), for the
   * insert and the shards' parts of it (their `initial_query_id` is the insert's).
   */
  async ensureQueryEnded(queryId: string, timeoutMs = 30_000): Promise<void> {
    const ch = connectionOf(this.store);
    const id = lit.queryId(queryId);
    if (ch.cluster !== undefined) {
      await this.endOnCluster(
        ch.cluster,
        sql`query_id = ${id} OR initial_query_id = ${id}`,
        `insert ${queryId}`,
        timeoutMs,
      );
      return;
    }
    const deadline = Date.now() + timeoutMs;
    const running = sql`SELECT count() AS n FROM system.processes WHERE query_id = ${id}`;
    for (let round = 0; ; round++) {
      if ((await this.count('running', running, 5000)) === 0) return;
      if (Date.now() > deadline) throw new Error(`insert ${queryId} is still running after KILL QUERY`);
      if (round === 0) await ch.kill(queryId);
      await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** round)));
    }
  }

  /**
   * Where each ticker's stored series ends (where a recorder starting on it resumes): the largest `ts` of any of its
   * rows — snapshots, deltas, trades, and gaps' `to_ts` — and its largest `sequence`; and the ends of its book and of
   * its trades apart (the writer lands them in lanes of their own: one may end before the other after a crash; the
   * `recorder_start` gap starts at the book's, the trades read back or gapped from the trades'), and where it begins
   * (no trade before it is read back). The same reads as landedEnds. Tickers without rows are absent from the answer.
   */
  async storedTickers(
    exchange: ExchangeKey,
    tickers: readonly string[],
    timeoutMs = 30_000,
    options: { tradesBackMs?: number } = {},
  ): Promise<Map<string, StoredTicker>> {
    const out = new Map<string, StoredTicker>();
    const lastTrades = new Map<string, number>();
    for (const [ticker, end] of await this.ends(exchange, tickers, timeoutMs, false)) {
      const tradesTs = Math.max(end.lastTradeTs, end.lastTradeGapTs);
      out.set(ticker, {
        lastTs: Math.max(end.lastTs, tradesTs),
        sequence: end.sequence,
        bookTs: end.lastTs,
        tradesTs,
        firstTs: end.firstTs,
        tradesAtEnd: [],
      });
      if (end.lastTradeTs >= 0) lastTrades.set(ticker, end.lastTradeTs);
    }
    const back = options.tradesBackMs ?? 0;
    const list = [...lastTrades];
    for (let i = 0; i < list.length; i += 500) {
      const chunk = list.slice(i, i + 500);
      const near = atTs(new Map(chunk), back);
      const rows = await this.q.jsonWithin(
        timeoutMs,
        'stored-trades-at-end',
        sql`SELECT DISTINCT ticker, ts, trade_id FROM ${this.q.db}.trades
WHERE exchange = ${lit.exchange(exchange)} AND (${near}) ORDER BY ticker, ts, trade_id`,
        (r) => ({ ticker: String(r.ticker), ts: Number(r.ts), id: String(r.trade_id) }),
      );
      for (const { ticker, ts, id } of rows) out.get(ticker)?.tradesAtEnd.push({ id, ts });
    }
    return out;
  }

  /**
   * Where each ticker's landed book ends, for the recorder that takes it over (redundant recording: the splice point
   * is `lastTs` + 1, docs/history-internals.md, "Schema": `handovers`): `lastTs` the largest `ts` of its deltas and
   * snapshots and `to_ts` of its book gaps (where the snapshot that closes a gap sits; trades and trades gaps are not
   * the book: -1 when it has only those), `sequence` the largest of its deltas and trades (0: none), `lastTradeTs`
   * the largest `ts` of its trades (-1: none), and `deltasAtLast` its deltas at `lastTs` in sequence order, decimals
   * as text without trailing zeros (the stored value; the recorder's own text may have had more places). Reads the
   * catalogues (a few rows per ticker), then the deltas at each ticker's last `ts`s (the primary key narrows them to
   * a granule), in chunks of 500 tickers; on a cluster through the Distributed tables (a replica more than 2 s behind
   * is not read while another is current: CLUSTER_SETTINGS). Tickers without rows are absent from the answer.
   */
  async landedEnds(
    exchange: ExchangeKey,
    tickers: readonly string[],
    timeoutMs = 30_000,
  ): Promise<Map<string, LandedEnd>> {
    const out = new Map<string, LandedEnd>();
    for (const [ticker, { lastTs, sequence, lastTradeTs, deltasAtLast }] of await this.ends(
      exchange,
      tickers,
      timeoutMs,
      true,
    )) {
      out.set(ticker, { lastTs, sequence, lastTradeTs, deltasAtLast });
    }
    return out;
  }

  /** The ends of every table per ticker (see storedTickers and landedEnds); the deltas at the book's end if asked. */
  private async ends(
    exchange: ExchangeKey,
    tickers: readonly string[],
    timeoutMs: number,
    withDeltasAtLast: boolean,
  ): Promise<Map<string, LandedEnd & { lastTradeGapTs: number; firstTs: number }>> {
    const db = this.q.db;
    const out = new Map<string, LandedEnd & { lastTradeGapTs: number; firstTs: number }>();
    const ofExchange = sql`exchange = ${lit.exchange(exchange)}`;
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
        sql`SELECT ticker, toString(kind) AS kind_name, minMerge(first_ts) AS start_ts, maxMerge(last_ts) AS end_ts
FROM ${db}.ticker_catalogue WHERE ${ofExchange} AND ticker IN (${list}) GROUP BY ticker, kind
UNION ALL
SELECT ticker, 'trade' AS kind_name, minMerge(first_ts) AS start_ts, maxMerge(last_ts) AS end_ts
FROM ${db}.trades_catalogue WHERE ${ofExchange} AND ticker IN (${list}) GROUP BY ticker
UNION ALL
SELECT ticker, concat(toString(stream), '_gap') AS kind_name, min(from_ts) AS start_ts, max(to_ts) AS end_ts
FROM ${db}.gaps WHERE ${ofExchange} AND ticker IN (${list}) GROUP BY ticker, stream`,
        (r) => ({
          ticker: String(r.ticker),
          kind: String(r.kind_name),
          from: Number(r.start_ts),
          ts: Number(r.end_ts),
        }),
      );
      // Deltas and trades share a ticker's sequence: its largest is at the last ts of one of them.
      const last = { delta: new Map<string, number>(), trade: new Map<string, number>() };
      for (const { ticker, kind, from, ts } of ends) {
        const entry = out.get(ticker) ?? {
          lastTs: -1,
          sequence: 0,
          lastTradeTs: -1,
          lastTradeGapTs: -1,
          firstTs: from,
          deltasAtLast: [],
        };
        entry.firstTs = Math.min(entry.firstTs, from);
        if (kind === 'trade') entry.lastTradeTs = Math.max(entry.lastTradeTs, ts);
        else if (kind === 'trades_gap') entry.lastTradeGapTs = Math.max(entry.lastTradeGapTs, ts);
        else entry.lastTs = Math.max(entry.lastTs, ts);
        out.set(ticker, entry);
        if (kind === 'delta' || kind === 'trade') last[kind].set(ticker, ts);
      }
      for (const [table, ends] of [
        ['deltas', last.delta],
        ['trades', last.trade],
      ] as const) {
        if (ends.size === 0) continue;
        const sequences = await this.q.jsonWithin(
          timeoutMs,
          'stored-sequences',
          sql`SELECT ticker, max(sequence) AS last_sequence FROM ${db}.${lit.identifier(table)}
WHERE ${ofExchange} AND (${atTs(ends)}) GROUP BY ticker`,
          (r) => ({ ticker: String(r.ticker), sequence: Number(r.last_sequence) }),
        );
        for (const { ticker, sequence } of sequences) {
          const entry = out.get(ticker);
          if (entry && sequence > entry.sequence) entry.sequence = sequence;
        }
      }
      const bookEnds = new Map(
        chunk.flatMap((t) => {
          const lastTs = out.get(t)?.lastTs ?? -1;
          return lastTs >= 0 ? [[t, lastTs] as const] : [];
        }),
      );
      if (!withDeltasAtLast || bookEnds.size === 0) continue;
      const deltas = await this.q.jsonWithin(
        timeoutMs,
        'landed-deltas',
        sql`SELECT ticker, sequence, toString(side) AS side_name, toString(price) AS price_text,
  toString(quantity_delta) AS delta_text
FROM ${db}.deltas WHERE ${ofExchange} AND (${atTs(bookEnds)}) ORDER BY ticker, sequence`,
        (r) => ({
          ticker: String(r.ticker),
          delta: {
            side: String(r.side_name) as Side,
            price: trimDecimal(String(r.price_text)),
            quantityDelta: trimDecimal(String(r.delta_text)),
            sequence: Number(r.sequence),
          },
        }),
      );
      for (const { ticker, delta } of deltas) out.get(ticker)?.deltasAtLast.push(delta);
    }
    return out;
  }

  /**
   * Ends every insert of a recorder's term still running (redundant recording: the recorder taking over the tickers
   * of a dead or deposed term, before it reads their landed ends), and waits until they have ended: `KILL QUERY …
   * SYNC` on the query ids `rec-<term>-…` (recorderQueryId), including the shards' parts of an insert through the
   * Distributed table (their `initial_query_id` is the insert's). Nothing of the term can land afterwards, except an
   * insert that had not yet reached ClickHouse (the lease's margins leave it seconds to do so). Throws if ClickHouse
   * cannot be asked, or (cluster) a reachable server still runs one of the term's queries at `timeoutMs`.
   *
   * On a cluster every server of it (`system.clusters`) is asked through `remote()` whether it runs one of the term's
   * queries; only then is `KILL QUERY ON CLUSTER … SYNC` sent (through the distributed DDL queue), with
   * `distributed_ddl_task_timeout` bounded by `timeoutMs`, and the servers are asked again until none runs one.
   * ON CLUSTER alone would wait for a server that is down up to the DDL timeout (180 s by default) and then fail
   * (measured on 18.16), so a takeover would never finish while one replica is down. A server `remote()` cannot
   * reach (connection refused or failed: a crashed or stopped server) counts as running nothing; its queued kill runs
   * when it is back.
   */
  async killWriter(term: number, timeoutMs = 30_000): Promise<void> {
    const ch = connectionOf(this.store);
    const pattern = lit.queryIdPrefix(recorderQueryPrefix(term));
    const ofTerm = sql`query_id LIKE ${pattern} OR initial_query_id LIKE ${pattern}`;
    if (ch.cluster === undefined) {
      await ch.data.command({ query: sql`KILL QUERY WHERE ${ofTerm} SYNC`.text });
      return;
    }
    await this.endOnCluster(ch.cluster, ofTerm, `queries of term ${term}`, timeoutMs);
  }

  /**
   * Ends the queries `which` selects on every server of the cluster and waits until none runs one (killWriter,
   * ensureQueryEnded): each server (`system.clusters`) is asked through `remote()` whether it runs one; only then is
   * `KILL QUERY ON CLUSTER … SYNC` sent (through the distributed DDL queue), with `distributed_ddl_task_timeout`
   * bounded by `timeoutMs`, and the servers are asked again until none runs one. A server `remote()` cannot reach
   * counts as running none (its queued kill runs when it is back). Throws if ClickHouse cannot be asked, or a reachable
   * server still runs one at `timeoutMs` (`what` names them in the error).
   */
  private async endOnCluster(clusterName: string, which: Sql, what: string, timeoutMs: number): Promise<void> {
    const ch = connectionOf(this.store);
    const cluster = lit.cluster(clusterName);
    const deadline = Date.now() + timeoutMs;
    const servers = await this.q.jsonWithin(
      timeoutMs,
      'cluster-servers',
      sql`SELECT DISTINCT host_name, port FROM system.clusters WHERE cluster = ${cluster}`,
      (r) => `${String(r.host_name)}:${Number(r.port)}`,
    );
    if (servers.length === 0) throw new Error(`no server of cluster ${clusterName} in system.clusters`);
    /** The servers that run one of the queries (unreachable ones count as running none). */
    const running = async (): Promise<string[]> => {
      const budget = Math.max(1000, Math.min(10_000, deadline - Date.now()));
      const found = await Promise.all(
        servers.map(async (server) => {
          try {
            const [n] = await this.q.jsonWithin(
              budget,
              'cluster-running',
              sql`SELECT count() AS n FROM remote(${lit.address(server)}, system.processes) WHERE ${which}`,
              (r) => Number(r.n),
            );
            return (n ?? 0) > 0 ? [server] : [];
          } catch (err) {
            if (unreachableServer(err)) return [];
            throw err;
          }
        }),
      );
      return found.flat();
    };
    for (let round = 0; ; round++) {
      const busy = await running();
      if (busy.length === 0) return;
      if (Date.now() >= deadline) {
        throw new Error(`${busy.join(', ')} still run ${what} after KILL QUERY ON CLUSTER`);
      }
      const ddlTimeout = Math.max(1, Math.min(10, Math.floor((deadline - Date.now()) / 1000)));
      try {
        await ch.data.command({
          query: sql`KILL QUERY ON CLUSTER ${cluster} WHERE ${which} SYNC`.text,
          clickhouse_settings: { distributed_ddl_task_timeout: String(ddlTimeout) },
        });
      } catch (err) {
        // Some server did not run it within the DDL timeout (a down one never does until it is back): the servers
        // are asked again, which is what decides.
        if (classifyClickHouseError(err).code !== DDL_TIMEOUT) throw err;
      }
      if (round > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 100 * 2 ** round)));
    }
  }

  /**
   * Records hand-overs (redundant recording), directly and awaited: the recorder taking a ticker writes its row
   * before any row of its own for it. `queryId` as for `insert`.
   */
  async insertHandovers(rows: readonly HandoverRow[], options: Pick<InsertOptions, 'queryId'> = {}): Promise<void> {
    if (rows.length === 0) return;
    await insertHandoverRows(this.store, rows, options);
  }

  /** The hand-overs from or to a term, in (exchange, ticker, ts) order: what a deposed term's spool is fenced by. */
  async handoversOf(term: number, timeoutMs = 30_000): Promise<HandoverRow[]> {
    return this.q.jsonWithin(
      timeoutMs,
      'handovers',
      sql`SELECT toString(exchange) AS exchange_name, ticker, ts, from_term, to_term, toString(kind) AS kind_name,
  detected_at
FROM ${this.q.db}.handovers WHERE from_term = ${lit.int(term)} OR to_term = ${lit.int(term)}
ORDER BY exchange, ticker, ts`,
      (r) => ({
        exchange: String(r.exchange_name) as ExchangeKey,
        ticker: String(r.ticker),
        ts: Number(r.ts),
        from_term: Number(r.from_term),
        to_term: Number(r.to_term),
        kind: String(r.kind_name) as HandoverKind,
        detected_at: Number(r.detected_at),
      }),
    );
  }

  /**
   * The book a ticker's landed rows end with at `at` (its landed end): the newest snapshot at or before `at` (within
   * `lookBackMs`) and the deltas from its ts to `at`, in (ts, sequence) order (rule 7 with the snapshot convention of
   * docs/history-internals.md: deltas at the snapshot's ts apply after it). Undefined when there is no such snapshot or
   * a book gap ends after it (the book is not known there). What a takeover on a receive clock compares its standby's
   * books with (the dead owner published no digest of its own).
   */
  async landedBook(
    exchange: ExchangeKey,
    ticker: string,
    at: number,
    lookBackMs = 86_400_000,
    timeoutMs = 30_000,
  ): Promise<{ levels: LandedLevel[]; deltas: Array<Omit<LandedDelta, 'sequence'>> } | undefined> {
    const db = this.q.db;
    const key = tickerCondition(exchange, ticker);
    const [base] = await this.q.jsonWithin(
      timeoutMs,
      'landed-book-base',
      sql`SELECT max(ts) AS snapshot_ts, count() AS n FROM ${db}.snapshots
WHERE ${key} AND ts <= ${lit.int(at)} AND ts >= ${lit.int(at - lookBackMs)}`,
      (r) => ({ ts: Number(r.snapshot_ts), n: Number(r.n) }),
    );
    if (base === undefined || base.n === 0) return undefined;
    const gapsAfter = await this.count(
      'landed-book-gaps',
      sql`SELECT count() AS n FROM ${db}.gaps WHERE ${key} AND ${BOOK_GAPS}
AND to_ts > ${lit.int(base.ts)} AND from_ts <= ${lit.int(at)}`,
      timeoutMs,
    );
    if (gapsAfter > 0) return undefined;
    const decimalRow = (r: Record<string, unknown>) => ({
      side: String(r.side_name) as Side,
      price: trimDecimal(String(r.price_text)),
      value: trimDecimal(String(r.value_text)),
    });
    const levels = await this.q.jsonWithin(
      timeoutMs,
      'landed-book-snapshot',
      sql`SELECT toString(side) AS side_name, toString(price) AS price_text, toString(quantity) AS value_text
FROM ${db}.snapshots WHERE ${key} AND ts = ${lit.int(base.ts)} ORDER BY side, price`,
      decimalRow,
    );
    const deltas = await this.q.jsonWithin(
      timeoutMs,
      'landed-book-deltas',
      sql`SELECT toString(side) AS side_name, toString(price) AS price_text, toString(quantity_delta) AS value_text
FROM ${db}.deltas WHERE ${key} AND ts >= ${lit.int(base.ts)} AND ts <= ${lit.int(at)} ORDER BY ts, sequence`,
      decimalRow,
    );
    return {
      levels: levels.map(({ side, price, value }) => ({ side, price, quantity: value })),
      deltas: deltas.map(({ side, price, value }) => ({ side, price, quantityDelta: value })),
    };
  }

  private async count(name: string, query: Sql, timeoutMs: number): Promise<number> {
    const [first] = await this.q.jsonWithin(timeoutMs, name, query, (r) => Number(r.n));
    return first ?? 0;
  }
}

/** TIMEOUT_EXCEEDED: a distributed DDL query some server has not run within `distributed_ddl_task_timeout`. */
const DDL_TIMEOUT = 159;

/**
 * `remote()` could not reach the server: NETWORK_ERROR (connection refused), SOCKET_TIMEOUT, ALL_CONNECTION_TRIES_FAILED.
 */
function unreachableServer(err: unknown): boolean {
  const code = classifyClickHouseError(err).code;
  return code === 209 || code === 210 || code === 279;
}

/**
 * `(ticker = … AND ts = …) OR …`: the rows of each ticker at one ts (the primary key narrows each to a granule); with
 * `backMs`, at that ts or up to `backMs` before it.
 */
function atTs(ends: ReadonlyMap<string, number>, backMs = 0): Sql {
  return join(
    [...ends].map(([t, ts]) =>
      backMs === 0
        ? sql`(ticker = ${lit.ticker(t)} AND ts = ${lit.int(ts)})`
        : sql`(ticker = ${lit.ticker(t)} AND ts >= ${lit.int(ts - backMs)} AND ts <= ${lit.int(ts)})`,
    ),
    ' OR ',
  );
}
