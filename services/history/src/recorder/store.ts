/**
 * Every query the recorder sends (its inserts go through clickhouse/inserts.ts). Values reach SQL only through the
 * validated literals of clickhouse/literals.ts. All of it runs on ClickHouse 18.16 and current releases.
 */
import type { ExchangeKey } from '@depthgate/auth';
import type { ClickHouse } from '../clickhouse/client';
import { join, lit, sql, type Sql } from '../clickhouse/literals';
import { MIGRATIONS } from '../clickhouse/migrations';
import type { ProbeKey } from './writer/batch';

async function scalar(ch: ClickHouse, query: Sql, timeoutMs: number): Promise<string> {
  const rs = await ch.data.query({
    query: query.text,
    format: 'TabSeparated',
    abort_signal: AbortSignal.timeout(timeoutMs),
    clickhouse_settings: { max_execution_time: Math.max(1, Math.ceil(timeoutMs / 1000)) },
  });
  return (await rs.text()).trim();
}

/** Whether the batch whose last row has this natural key is in its table (docs/history.md, probe-before-retry). */
export async function probeBatch(ch: ClickHouse, key: ProbeKey, timeoutMs = 10_000): Promise<boolean> {
  const where = sql`exchange = ${lit.exchange(key.exchange)} AND ticker = ${lit.ticker(key.ticker)}`;
  let query: Sql;
  switch (key.table) {
    case 'deltas':
      query = sql`SELECT count() FROM ${ch.db}.deltas WHERE ${where} AND ts = ${lit.int(key.ts)} AND sequence = ${lit.int(key.sequence)}`;
      break;
    case 'snapshots':
      query = sql`SELECT count() FROM ${ch.db}.snapshots WHERE ${where} AND ts = ${lit.int(key.ts)}`;
      break;
    case 'gaps':
      query = sql`SELECT count() FROM ${ch.db}.gaps WHERE ${where} AND from_ts = ${lit.int(key.fromTs)} AND to_ts = ${lit.int(
        key.toTs,
      )} AND reason = ${lit.token(key.reason)} AND detected_at = ${lit.int(key.detectedAt)}`;
      break;
  }
  return Number(await scalar(ch, query, timeoutMs)) > 0;
}

/**
 * Makes sure an insert we gave up on is not still running on the server (it could commit after our probe said
 * "absent"): kills it and waits until it has left system.processes. Throws if ClickHouse cannot be asked.
 */
export async function ensureQueryEnded(ch: ClickHouse, queryId: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let round = 0; ; round++) {
    const running = Number(
      await scalar(ch, sql`SELECT count() FROM system.processes WHERE query_id = ${lit.queryId(queryId)}`, 5000),
    );
    if (running === 0) return;
    if (Date.now() > deadline) throw new Error(`insert ${queryId} is still running after KILL QUERY`);
    if (round === 0) await ch.kill(queryId);
    await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** round)));
  }
}

/** The highest migration version recorded, or -1 while the schema is not there. */
export async function schemaVersion(ch: ClickHouse): Promise<number> {
  const exists = Number(
    await scalar(
      ch,
      sql`SELECT count() FROM system.tables WHERE database = ${lit.name(ch.database)} AND name = 'schema_migrations'`,
      5000,
    ),
  );
  if (exists === 0) return -1;
  const v = await scalar(ch, sql`SELECT max(version) FROM ${ch.db}.schema_migrations`, 5000);
  return v === '' ? -1 : Number(v);
}

export const REQUIRED_SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));

export interface StoredTicker {
  lastTs: number;
  sequence: number;
}

/**
 * Where each ticker's stored series ends: the largest `ts` of its snapshots, deltas and gaps, and its largest
 * `sequence`. Reads the catalogue (a few rows per ticker), then the deltas at each ticker's last `ts` only (the
 * primary key narrows it to one granule). Tickers without rows are absent from the answer.
 */
export async function storedTickers(
  ch: ClickHouse,
  exchange: ExchangeKey,
  tickers: readonly string[],
  timeoutMs = 30_000,
): Promise<Map<string, StoredTicker>> {
  const out = new Map<string, StoredTicker>();
  for (let i = 0; i < tickers.length; i += 500) {
    const chunk = tickers.slice(i, i + 500);
    const list = join(
      chunk.map((t) => lit.ticker(t)),
      ', ',
    );
    const rows = (
      await scalar(
        ch,
        sql`SELECT ticker, toString(kind), maxMerge(last_ts) FROM ${ch.db}.ticker_catalogue
WHERE exchange = ${lit.exchange(exchange)} AND ticker IN (${list}) GROUP BY ticker, kind
UNION ALL
SELECT ticker, 'gap', max(to_ts) FROM ${ch.db}.gaps
WHERE exchange = ${lit.exchange(exchange)} AND ticker IN (${list}) GROUP BY ticker`,
        timeoutMs,
      )
    )
      .split('\n')
      .filter((l) => l !== '');
    const lastDelta = new Map<string, number>();
    for (const line of rows) {
      const [ticker, kind, ts] = line.split('\t');
      if (ticker === undefined || ts === undefined) continue;
      const t = Number(ts);
      const entry = out.get(ticker) ?? { lastTs: -1, sequence: 0 };
      entry.lastTs = Math.max(entry.lastTs, t);
      out.set(ticker, entry);
      if (kind === 'delta') lastDelta.set(ticker, t);
    }
    if (lastDelta.size === 0) continue;
    const conditions = join(
      [...lastDelta].map(([t, ts]) => sql`(ticker = ${lit.ticker(t)} AND ts = ${lit.int(ts)})`),
      ' OR ',
    );
    const seqRows = (
      await scalar(
        ch,
        sql`SELECT ticker, max(sequence) FROM ${ch.db}.deltas
WHERE exchange = ${lit.exchange(exchange)} AND (${conditions}) GROUP BY ticker`,
        timeoutMs,
      )
    )
      .split('\n')
      .filter((l) => l !== '');
    for (const line of seqRows) {
      const [ticker, seq] = line.split('\t');
      const entry = ticker === undefined ? undefined : out.get(ticker);
      if (entry && seq !== undefined) entry.sequence = Number(seq);
    }
  }
  return out;
}
