/**
 * Upkeep of the history benchmark's data set, for bench/history/run.sh: `node dataset.mts <command>` with
 * CLICKHOUSE_URL and CLICKHOUSE_DATABASE set. The SQL is @depthgate/history-store's (`benchmarkSql`).
 *
 *   exists        prints 1 when the data set's tables exist, else 0
 *   drop          drops the database
 *   optimize      merges each table into one part per month (OPTIMIZE … FINAL), so every run reads the same layout
 *   merges        prints how many merges are running on the database
 */
import { benchmarkSql } from '@depthgate/history-store';

const url = process.env.CLICKHOUSE_URL;
const database = process.env.CLICKHOUSE_DATABASE ?? 'bench';
if (!url) throw new Error('CLICKHOUSE_URL is not set');
const SQL = benchmarkSql(database);

async function run(query: string): Promise<string> {
  const res = await fetch(`${url}/`, { method: 'POST', body: query });
  const text = await res.text();
  if (!res.ok) throw new Error(`ClickHouse ${res.status}: ${text.slice(0, 300)}`);
  return text.trim();
}

const count = async (query: string) =>
  Number((JSON.parse(await run(`${query} FORMAT JSONEachRow`)) as { n: string }).n);

switch (process.argv[2]) {
  case 'exists':
    console.log(await count(SQL.exists()).catch(() => 0));
    break;
  case 'drop':
    await run(SQL.dropDatabase());
    break;
  case 'optimize':
    await run(SQL.optimize('delta'));
    await run(SQL.optimize('snapshot'));
    break;
  case 'merges':
    console.log(await count(SQL.merges()));
    break;
  default:
    throw new Error('usage: dataset.mts exists|drop|optimize|merges');
}
