#!/usr/bin/env node
/**
 * Fills ClickHouse with generated order-book history (behind `./dev seed` and the first `./dev up --sim`).
 * Reads CLICKHOUSE_URL, CLICKHOUSE_DATABASE and CLICKHOUSE_CLUSTER; applies the migrations first. See docs/history-internals.md, "Data generator".
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { EXCHANGES, EXCHANGE_KEYS, HISTORY_START_MS, canonicalExchange, type ExchangeKey } from '@depthgate/platforms';
import {
  HistoryStore,
  TICKER_PATTERN,
  loadClickHouseConfig,
  migrateWhenReachable,
  storeOptions,
  tickersWithData,
} from '@depthgate/history-store';
import { ConfigError, parseRfc3339 } from '@depthgate/service-kit';
import type { TickerRef } from '../generator/generate';
import { generateTickers } from '../generator/profiles';
import { Progress, planGeneration, runGeneration, tickersFrom } from '../generator/seed';

const USAGE = `usage: seed [range] [tickers] [shape] [options]

range (default: from 2026-03-07T00:00:00Z to now):
  --days N                      the last N days (up to now)
  --from TS [--to TS]           RFC 3339 bounds (--to defaults to now)
tickers (default: --tickers-per-exchange 4):
  --tickers-from URL            every ticker of the venue simulator (GET URL/control/tickers)
  --ticker EXCHANGE:TICKER      one ticker (repeatable), e.g. venue_b:KXBTCD-26MAR07-T100000
  --tickers-per-exchange N      N generated tickers per exchange, in each venue's shapes
  --exchanges LIST              only these exchanges (${EXCHANGE_KEYS.join(',')})
shape:
  --snapshot-interval-minutes M full book every M minutes (default 5, like the recorder)
  --events-per-minute E         mean delta messages per minute and ticker (default 6)
  --rows N                      instead: solve the delta rate so the total is about N rows
options:
  --seed S                      random seed (default 42); the same seed gives the same rows
  --workers W                   generator threads (default: 0 for small jobs, else cores - 1)
  --batch-rows N                rows per insert (default 1000000)
  --force                       generate even for tickers that already hold rows in the range
  --dry-run                     print the plan and exit
`;

class UsageError extends Error {}

function positive(flag: string, value: string | undefined, fallback: number, integer = true): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new UsageError(`${flag} must be a positive ${integer ? 'integer' : 'number'}, got "${value}"`);
  }
  return n;
}

function timestamp(flag: string, value: string): number {
  const t = parseRfc3339(value);
  if (t === undefined) throw new UsageError(`${flag} must be an RFC 3339 timestamp, got "${value}"`);
  return t;
}

function parse() {
  try {
    return parseArgs({
      options: {
        days: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        'tickers-from': { type: 'string' },
        ticker: { type: 'string', multiple: true },
        'tickers-per-exchange': { type: 'string' },
        exchanges: { type: 'string' },
        'snapshot-interval-minutes': { type: 'string' },
        'events-per-minute': { type: 'string' },
        rows: { type: 'string' },
        seed: { type: 'string' },
        workers: { type: 'string' },
        'batch-rows': { type: 'string' },
        force: { type: 'boolean' },
        'dry-run': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

async function main(): Promise<number> {
  const { values } = parse();
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const config = loadClickHouseConfig(process.env);
  const now = Date.now();

  // Range.
  if (values.days !== undefined && values.from !== undefined) throw new UsageError('give --days or --from, not both');
  const to = values.to !== undefined ? timestamp('--to', values.to) : now;
  let from =
    values.days !== undefined
      ? to - positive('--days', values.days, 1, false) * 86_400_000
      : values.from !== undefined
        ? timestamp('--from', values.from)
        : HISTORY_START_MS;
  if (from < HISTORY_START_MS) {
    console.error(
      `note: history starts on 2026-03-07; generating from there instead of ${new Date(from).toISOString()}`,
    );
    from = HISTORY_START_MS;
  }
  if (from >= to)
    throw new UsageError(`the range is empty (${new Date(from).toISOString()} to ${new Date(to).toISOString()})`);

  // Tickers.
  const exchanges: ExchangeKey[] = values.exchanges
    ? values.exchanges.split(',').map((e) => {
        const key = canonicalExchange(e.trim());
        if (!key) throw new UsageError(`unknown exchange "${e}" (${EXCHANGES.describe()})`);
        return key;
      })
    : [...EXCHANGE_KEYS];
  const seed = values.seed ?? '42';
  let tickers: TickerRef[] = [];
  if (values['tickers-from']) {
    tickers = await tickersFrom(values['tickers-from'], { warn: (m) => console.error(`warning: ${m}`) });
  }
  for (const spec of values.ticker ?? []) {
    const i = spec.indexOf(':');
    const exchange = canonicalExchange(spec.slice(0, Math.max(0, i)));
    const ticker = spec.slice(i + 1);
    if (i < 0 || !exchange || !TICKER_PATTERN.test(ticker)) {
      throw new UsageError(`--ticker must look like venue_b:KXBTCD-26MAR07-T100000, got "${spec}"`);
    }
    tickers.push({ exchange, ticker });
  }
  if (!values['tickers-from'] && !values.ticker) {
    const n = positive('--tickers-per-exchange', values['tickers-per-exchange'], 4);
    for (const exchange of exchanges)
      for (const ticker of generateTickers(exchange, n, seed)) tickers.push({ exchange, ticker });
  }
  tickers = tickers.filter((t) => exchanges.includes(t.exchange));
  if (tickers.length === 0) {
    console.error('nothing to generate: no tickers');
    return 0;
  }

  const { plan, expectedRows } = planGeneration({
    tickers,
    from,
    to,
    snapshotIntervalMs: positive('--snapshot-interval-minutes', values['snapshot-interval-minutes'], 5, false) * 60_000,
    seed,
    batchRows: positive('--batch-rows', values['batch-rows'], 1_000_000),
    eventsPerMinute:
      values['events-per-minute'] !== undefined
        ? positive('--events-per-minute', values['events-per-minute'], 6, false)
        : undefined,
    targetRows: values.rows !== undefined ? positive('--rows', values.rows, 1) : undefined,
  });
  const workers =
    values.workers !== undefined
      ? Number(values.workers)
      : expectedRows < 2_000_000
        ? 0
        : Math.max(1, Math.min(8, os.availableParallelism() - 1));
  if (!Number.isInteger(workers) || workers < 0) throw new UsageError('--workers must be 0 or a positive integer');
  const describe = `${tickers.length} tickers, ${new Date(from).toISOString()} to ${new Date(to).toISOString()}, snapshots every ${plan.snapshotIntervalMs / 60_000} min, ${plan.eventsPerMinute.toFixed(2)} delta messages/min per ticker, seed ${seed}: about ${expectedRows} rows`;
  if (values['dry-run']) {
    console.log(describe);
    for (const t of tickers) console.log(`  ${t.exchange} ${t.ticker}`);
    return 0;
  }

  const store = new HistoryStore({ ...storeOptions(config), maxConnections: 8 });
  try {
    await migrateWhenReachable(store, { timeoutMs: 30_000 });
    if (!values.force) {
      const taken = await tickersWithData(store, tickers, from, to);
      if (taken.size > 0) {
        console.error(
          `skipping ${taken.size} ticker(s) that already hold rows in this range (--force generates them anyway): ${[...taken].slice(0, 5).join(', ')}${taken.size > 5 ? ', …' : ''}`,
        );
        plan.tickers = tickers.filter((t) => !taken.has(`${t.exchange}:${t.ticker}`));
        if (plan.tickers.length === 0) return 0;
      }
    }
    console.error(`generating ${describe} (${workers === 0 ? 'in process' : `${workers} worker threads`})`);
    const progress = new Progress(expectedRows);
    const started = Date.now();
    await runGeneration(store, plan, { workers, store: storeOptions(config), onRows: (n) => progress.add(n) });
    progress.done();
    console.error(
      `done in ${((Date.now() - started) / 1000).toFixed(1)} s; each series ends with a seed_end gap row in ${config.CLICKHOUSE_DATABASE}.gaps`,
    );
    return 0;
  } finally {
    await store.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) {
      console.error(`error: ${err.message}\n\n${USAGE}`);
      process.exit(2);
    }
    console.error(`error: ${err instanceof ConfigError ? err.message : (err as Error).message}`);
    process.exit(1);
  },
);
