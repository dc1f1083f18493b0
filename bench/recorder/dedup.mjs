// Issue 27's "measure the options" for redundant recording, read side (`./dev bench recorder --dedup-reads`, started
// by run.mjs, which owns the benchmark's private ClickHouse): what "both recorders write, ClickHouse deduplicates"
// costs in storage and in reads, against one copy and against a read-side fence.
//
// In a database of its own (bench_dedup, dropped at the end), tables with the history's delta columns and types (the
// shape of `deltas` in packages/history-store/src/migrations.ts, with received_ts and venue_seq):
//   plain           MergeTree, 1 copy, optimized to 1 part;
//   rmt             ReplacingMergeTree, 2 copies differing only in received_ts, OPTIMIZE FINAL → 1 copy left;
//   plain_unmerged  MergeTree, 1 copy in 10 inserts, merges stopped;
//   rmt_unmerged    ReplacingMergeTree, 2 copies in 20 inserts interleaved A, B, A, B (as two recorders' batches
//                   land), merges stopped;
//   fenced          MergeTree + term: term 1 wrote rows up to 95 %, term 2 took over at the splice S (90 %) and wrote
//                   from there (5 % of deposed rows), optimized.
// N rows (--rows, 5,000,000) generated inside ClickHouse from system.numbers: 50 tickers, one row every 7 ms per
// ticker. Storage: parts, rows and bytes on disk per table. Reads: each form below, for a random ticker, in shuffled
// order within each round: a page window of ~1,000 rows (--page-rounds, 80) and the whole ticker (--rounds, 40), as
// RowBinary; p50/p90/p99 in ms and each form's p50 and p99 over plain_1part's (the anchor, same run). Every form must
// return the anchor's row count in each round (else the run fails: a wrong dedup is no comparison). Then the same on
// current ClickHouse through chdb in-process (DG_CHDB_DIR, else .tools/chdb: `./dev test` installs it), when present.
// The SQL runs on 18.16 and on current ClickHouse alike.
//
// The SQL here is the experiment itself (its throwaway tables and the dedup forms being compared, none of them a
// query of the product), kept in this one file so that the measurement reads as a whole; the house rule that SQL
// lives in packages/history-store (benchmarkSql) is waived for this file only, on purpose.
/* eslint-disable no-restricted-syntax -- experiment SQL, see above */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ROOT, cleanup, pct, tempDir } from '../lib.mjs';

const DB = 'bench_dedup';
const TICKERS = 50;
const STEP_MS = 7;
const T0 = 1_764_000_000_000;
const PAGE_ROWS = 1000;
/** RowBinary bytes per row of the read columns: ts Int64, sequence UInt64, side Enum8, 2 × Decimal(38, 18). */
const ROW_BYTES = 8 + 8 + 1 + 16 + 16;

const COLUMNS =
  "exchange Enum8('venue_b' = 1, 'venue_c' = 2), ticker String, ts Int64, sequence UInt64, side Enum8('bid' = 1, 'ask' = 2), price Decimal(38, 18), quantity_delta Decimal(38, 18), received_ts Int64, venue_seq String";
const TAIL =
  "PARTITION BY toYYYYMM(toDateTime(intDiv(ts, 1000), 'UTC')) ORDER BY (exchange, ticker, ts, sequence) SETTINGS index_granularity = 8192";
/** Rows from..from+count of the generated stream (one copy), every column but received_ts and venue_seq. */
const rowsOf = (from, count) =>
  `SELECT 'venue_b' AS exchange, concat('T', toString(number % ${TICKERS})) AS ticker, ${T0} + intDiv(number, ${TICKERS}) * ${STEP_MS} AS ts, (${T0} + intDiv(number, ${TICKERS}) * ${STEP_MS}) * 1000 AS sequence, if(number % 2 = 0, 'bid', 'ask') AS side, toDecimal128(number % 99 + 1, 18) / 100 AS price, toDecimal128(toInt64(number % 1000) - 500, 18) / 10 AS quantity_delta FROM system.numbers WHERE number >= ${from} LIMIT ${count}`;
/** A copy of rows from..from+count whose received_ts is ts + lag (the copies differ only there). */
const copy = (table, from, count, lag, extra = '') =>
  `INSERT INTO ${DB}.${table} SELECT *, ts + ${lag} AS received_ts, '' AS venue_seq${extra} FROM (${rowsOf(from, count)})`;

/** The read forms: the window's predicate in, one query out (columns as the history reads them). */
function forms(splice) {
  const C = 'ts, sequence, side, price, quantity_delta';
  const O = 'ORDER BY ts, sequence LIMIT 1000000';
  return {
    plain_1part: (w) => `SELECT ${C} FROM ${DB}.plain WHERE ${w} ${O}`,
    rmt_1part_FINAL: (w) => `SELECT ${C} FROM ${DB}.rmt FINAL WHERE ${w} ${O}`,
    plain_10parts: (w) => `SELECT ${C} FROM ${DB}.plain_unmerged WHERE ${w} ${O}`,
    rmt2x_FINAL: (w) => `SELECT ${C} FROM ${DB}.rmt_unmerged FINAL WHERE ${w} ${O}`,
    rmt2x_LIMIT1BY: (w) =>
      `SELECT ${C} FROM ${DB}.rmt_unmerged WHERE ${w} ORDER BY ts, sequence LIMIT 1 BY ts, sequence LIMIT 1000000`,
    rmt2x_GROUPBY: (w) =>
      `SELECT ts, sequence, any(side), any(price), any(quantity_delta) FROM ${DB}.rmt_unmerged WHERE ${w} GROUP BY ts, sequence ${O}`,
    fenced_2seg: (w) =>
      `SELECT ${C} FROM ${DB}.fenced WHERE ${w} AND ((term = 1 AND ts < ${splice}) OR (term = 2 AND ts >= ${splice})) ${O}`,
  };
}

/** What each form stands for, for the tables. */
const MEANING = {
  plain_1part: 'plain MergeTree, 1 copy, 1 part (today; the anchor)',
  rmt_1part_FINAL: 'ReplacingMergeTree merged (1 copy left), `FINAL`',
  plain_10parts: 'plain MergeTree, 1 copy in 10 parts',
  rmt2x_FINAL: 'ReplacingMergeTree, 2 copies unmerged, `FINAL`',
  rmt2x_LIMIT1BY: '2 copies unmerged, `LIMIT 1 BY ts, sequence`',
  rmt2x_GROUPBY: '2 copies unmerged, `GROUP BY ts, sequence` + `any()`',
  fenced_2seg: 'MergeTree + term, 2 segments `(term = 1 AND ts < S) OR (term = 2 AND ts >= S)`',
};

function shuffled(list) {
  const a = [...list];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

/** Seconds `fn` takes. */
async function timed(fn) {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/**
 * Builds the tables on `engine` ({ exec(sql) → text }); returns the splice S and the seconds of the merged tables'
 * inserts and OPTIMIZE FINALs (ingest inside ClickHouse: one copy against two).
 */
async function build(engine, rows, log) {
  const t0 = Date.now();
  const ingest = {};
  await engine.exec(`DROP DATABASE IF EXISTS ${DB}`);
  await engine.exec(`CREATE DATABASE ${DB}`);
  for (const [name, kind] of [
    ['plain', 'MergeTree'],
    ['rmt', 'ReplacingMergeTree'],
    ['plain_unmerged', 'MergeTree'],
    ['rmt_unmerged', 'ReplacingMergeTree'],
  ]) {
    await engine.exec(`CREATE TABLE ${DB}.${name} (${COLUMNS}) ENGINE = ${kind}() ${TAIL}`);
  }
  await engine.exec(`CREATE TABLE ${DB}.fenced (${COLUMNS}, term UInt64) ENGINE = MergeTree() ${TAIL}`);
  await engine.exec(`SYSTEM STOP MERGES ${DB}.plain_unmerged`);
  await engine.exec(`SYSTEM STOP MERGES ${DB}.rmt_unmerged`);
  ingest.plainInsert = await timed(() => engine.exec(copy('plain', 0, rows, 40)));
  // Two recorders' copies of the same rows, each its own receive time.
  ingest.rmtInsert = await timed(async () => {
    await engine.exec(copy('rmt', 0, rows, 40));
    await engine.exec(copy('rmt', 0, rows, 43));
  });
  const chunk = Math.ceil(rows / 10);
  for (let from = 0; from < rows; from += chunk) {
    const n = Math.min(chunk, rows - from);
    await engine.exec(copy('plain_unmerged', from, n, 40));
    await engine.exec(copy('rmt_unmerged', from, n, 40));
    await engine.exec(copy('rmt_unmerged', from, n, 43));
  }
  // The splice at 90 % of the rows, on a whole ms (a row of T0's first ticker starts each ms).
  const spliceRow = Math.floor((rows * 0.9) / TICKERS) * TICKERS;
  const splice = T0 + (spliceRow / TICKERS) * STEP_MS;
  await engine.exec(copy('fenced', 0, Math.floor(rows * 0.95), 40, ', toUInt64(1) AS term'));
  await engine.exec(copy('fenced', spliceRow, rows - spliceRow, 43, ', toUInt64(2) AS term'));
  ingest.plainOptimize = await timed(() => engine.exec(`OPTIMIZE TABLE ${DB}.plain FINAL`));
  ingest.rmtOptimize = await timed(() => engine.exec(`OPTIMIZE TABLE ${DB}.rmt FINAL`));
  await engine.exec(`OPTIMIZE TABLE ${DB}.fenced FINAL`);
  log(`  ${engine.name}: ${rows} rows per copy generated in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return { splice, ingest };
}

/** Parts, rows and bytes on disk of each table (active parts). */
async function storage(engine) {
  const text = await engine.exec(
    `SELECT table, count(), sum(rows), sum(bytes_on_disk) FROM system.parts WHERE database = '${DB}' AND active GROUP BY table ORDER BY table FORMAT TabSeparated`,
  );
  const out = new Map();
  for (const line of text.split('\n').filter((l) => l !== '')) {
    const [table, parts, rowCount, bytes] = line.split('\t');
    out.set(table, { parts: Number(parts), rows: Number(rowCount), bytes: Number(bytes) });
  }
  return out;
}

/**
 * Times every form on random windows of `width` ms, `rounds` rounds, forms shuffled within each round; one untimed
 * warm-up round first. Returns each form's latencies (ms).
 */
async function readRounds(engine, queries, rounds, width, span) {
  const names = Object.keys(queries);
  const times = Object.fromEntries(names.map((k) => [k, []]));
  for (let r = -1; r < rounds; r++) {
    const ticker = `T${Math.floor(Math.random() * TICKERS)}`;
    const from = T0 + STEP_MS * Math.floor((Math.random() * Math.max(0, span - width)) / STEP_MS);
    const where = `exchange = 'venue_b' AND ticker = '${ticker}' AND ts >= ${from} AND ts < ${from + width}`;
    const counts = {};
    for (const k of shuffled(names)) {
      const t0 = process.hrtime.bigint();
      const bytes = await engine.read(queries[k](where));
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (r >= 0) times[k].push(ms);
      counts[k] = bytes / ROW_BYTES;
    }
    for (const k of names) {
      if (counts[k] !== counts.plain_1part) {
        throw new Error(
          `${engine.name}: ${k} returned ${counts[k]} rows for ${ticker} [${from}, ${from + width}), plain_1part ${counts.plain_1part}`,
        );
      }
    }
  }
  return times;
}

const f1 = (n) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const f2 = (n) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
const int = (n) => n.toLocaleString('en-US');

function readTable(title, times) {
  const base = times.plain_1part;
  const b50 = pct(base, 50);
  const b99 = pct(base, 99);
  const out = [
    `**${title}**`,
    '',
    '| form | p50 / p90 / p99 ms | × plain_1part p50 / p99 | ≤ 1.1× (p50 and p99) |',
    '| --- | --- | --- | --- |',
  ];
  for (const [k, v] of Object.entries(times)) {
    const r50 = pct(v, 50) / b50;
    const r99 = pct(v, 99) / b99;
    out.push(
      `| ${k}: ${MEANING[k]} | ${f1(pct(v, 50))} / ${f1(pct(v, 90))} / ${f1(pct(v, 99))} | ${f2(r50)}× / ${f2(r99)}× | ${k === 'plain_1part' ? '(anchor)' : r50 <= 1.1 && r99 <= 1.1 ? 'yes' : 'no'} |`,
    );
  }
  return out;
}

/** Storage, then both read comparisons, on one engine; its database dropped at the end. Returns Markdown lines. */
async function measure(engine, { rows, rounds, pageRounds, log }) {
  try {
    const { splice, ingest } = await build(engine, rows, log);
    const version = (await engine.exec('SELECT version() FORMAT TabSeparated')).trim();
    const label = `${version}, ${engine.name}`;
    const st = await storage(engine);
    const ratio = (a, b) => (st.get(a) && st.get(b) ? `${f2(st.get(a).bytes / st.get(b).bytes)}×` : 'n/a');
    const out = [
      `### ClickHouse ${label}`,
      '',
      `${int(rows)} delta rows per copy, ${TICKERS} tickers (${int(Math.ceil(rows / TICKERS))} rows each, one every ${STEP_MS} ms), splice S at 90 %.`,
      '',
      '| table | parts | rows | bytes on disk | bytes × |',
      '| --- | --- | --- | --- | --- |',
    ];
    const against = {
      plain_unmerged: '(1 copy, unmerged)',
      rmt_unmerged: `${ratio('rmt_unmerged', 'plain_unmerged')} of plain_unmerged`,
      plain: '(1 copy, merged)',
      rmt: `${ratio('rmt', 'plain')} of plain`,
      fenced: `${ratio('fenced', 'plain')} of plain`,
    };
    for (const t of Object.keys(against)) {
      const s = st.get(t) ?? { parts: 0, rows: 0, bytes: 0 };
      out.push(`| ${t} | ${s.parts} | ${int(s.rows)} | ${int(s.bytes)} | ${against[t]} |`);
    }
    out.push(
      '',
      `Storage of two copies unmerged over one copy unmerged (rmt_unmerged / plain_unmerged): ${ratio('rmt_unmerged', 'plain_unmerged')}.`,
      '',
      `Ingest inside ClickHouse (\`INSERT … SELECT\` from system.numbers; one run each, indicative): 1 copy into plain ${f2(ingest.plainInsert)} s, 2 copies into rmt ${f2(ingest.rmtInsert)} s (${f2(ingest.rmtInsert / ingest.plainInsert)}×); \`OPTIMIZE … FINAL\` plain ${f2(ingest.plainOptimize)} s, rmt ${f2(ingest.rmtOptimize)} s (${f2(ingest.rmtOptimize / ingest.plainOptimize)}×).`,
      '',
    );
    const queries = forms(splice);
    const span = Math.ceil(rows / TICKERS) * STEP_MS;
    log(`  ${engine.name}: ${pageRounds} rounds of ~${PAGE_ROWS}-row windows`);
    const page = await readRounds(engine, queries, pageRounds, PAGE_ROWS * STEP_MS, span);
    log(`  ${engine.name}: ${rounds} rounds of whole tickers`);
    const whole = await readRounds(engine, queries, rounds, span, span);
    out.push(
      ...readTable(`${label}: ~${PAGE_ROWS}-row window, ${pageRounds} rounds`, page),
      '',
      ...readTable(`${label}: whole ticker (${int(Math.ceil(rows / TICKERS))} rows), ${rounds} rounds`, whole),
      '',
      'Percentiles are nearest-rank (with fewer than 100 rounds p99 is the slowest sample); the ratios of p50 are the',
      'steadier figures. Each round reads one random ticker and window with every form, in a shuffled order.',
    );
    return out;
  } finally {
    await engine.exec(`DROP DATABASE IF EXISTS ${DB}`).catch(() => undefined);
  }
}

/** The ClickHouse server at `url` over HTTP (RowBinary reads: the bytes are read to the end). */
function httpEngine(url) {
  const post = async (sql) => {
    const res = await fetch(url, { method: 'POST', body: sql });
    const body = await res.arrayBuffer();
    if (!res.ok) throw new Error(`ClickHouse ${res.status}: ${Buffer.from(body).toString('utf8').slice(0, 300)}`);
    return body;
  };
  return {
    name: 'over HTTP',
    exec: async (sql) => Buffer.from(await post(sql)).toString('utf8'),
    read: async (sql) => (await post(`${sql} FORMAT RowBinary`)).byteLength,
  };
}

/** chdb's folder (DG_CHDB_DIR, else .tools/chdb), or why it cannot be used. */
function chdbDir() {
  const dir = process.env.DG_CHDB_DIR ?? path.join(ROOT, '.tools/chdb');
  if (!existsSync(path.join(dir, 'node_modules/chdb'))) {
    return { skip: `chdb is not installed in ${dir} (set DG_CHDB_DIR, or run ./dev test once to install it)` };
  }
  return { dir };
}

/**
 * Runs the measurement against the benchmark's ClickHouse at `url`, then on chdb when it is installed. Returns the
 * Markdown lines to print.
 */
export async function dedupReadsRun({ url, rows, rounds, pageRounds, log }) {
  if (!(rows >= 1000 && rounds >= 1 && pageRounds >= 1)) {
    throw new Error('--rows is at least 1000, --rounds and --page-rounds at least 1');
  }
  log(`==> dedup reads on the benchmark's ClickHouse (${rows} rows)`);
  const out = await measure(httpEngine(url), { rows, rounds, pageRounds, log });
  out.push('');
  const where = chdbDir();
  if (where.skip) {
    out.push(`chdb: skipped: ${where.skip}.`);
    return out;
  }
  let Session;
  try {
    ({ Session } = createRequire(path.join(where.dir, 'package.json'))('chdb'));
  } catch (err) {
    out.push(`chdb: skipped: it does not load from ${where.dir} (${err.message.split('\n')[0]}).`);
    return out;
  }
  log(`==> dedup reads on current ClickHouse (chdb in-process, ${where.dir})`);
  const dataDir = tempDir('dedup-chdb');
  const session = new Session(dataDir);
  try {
    const engine = {
      name: 'chdb in-process',
      exec: async (sql) => (await session.queryAsync(sql, { format: 'TabSeparated' })).text(),
      read: async (sql) => (await session.queryAsync(sql, { format: 'RowBinary' })).bytes().byteLength,
    };
    out.push(...(await measure(engine, { rows, rounds, pageRounds, log })));
  } finally {
    session.close();
    cleanup(dataDir);
  }
  return out;
}
