/**
 * Upkeep of the history benchmark's data set, for bench/history/stack.sh: `node dataset.mts <command>` with
 * CLICKHOUSE_URL and CLICKHOUSE_DATABASE set, and in cluster mode CLICKHOUSE_CLUSTER and CLICKHOUSE_CLUSTER_NODES
 * (infra/local/clickhouse-cluster.sh's nodes file: "name shard replica http tcp interserver" per line). The SQL is
 * @depthgate/history-store's (`benchmarkSql`).
 *
 *   exists        prints 1 when the data set's tables exist, else 0
 *   drop          drops the database
 *   optimize      merges each table into one part per month (OPTIMIZE … FINAL), so every run reads the same layout;
 *                 on a cluster each shard's table on its first replica, then every replica syncs
 *   merges        prints how many merges are running on the database
 */
import { readFileSync } from 'node:fs';
import { benchmarkSql } from '@depthgate/history-store';

const url = process.env.CLICKHOUSE_URL;
const database = process.env.CLICKHOUSE_DATABASE ?? 'bench';
if (!url) throw new Error('CLICKHOUSE_URL is not set');
const cluster = process.env.CLICKHOUSE_CLUSTER || undefined;
const SQL = benchmarkSql(database, cluster);

async function run(query: string, server = url): Promise<string> {
  const res = await fetch(`${server}/`, { method: 'POST', body: query });
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
  case 'optimize': {
    if (cluster === undefined) {
      await run(SQL.optimize('delta'));
      await run(SQL.optimize('snapshot'));
      await run(SQL.optimize('trade'));
      break;
    }
    const nodesFile = process.env.CLICKHOUSE_CLUSTER_NODES;
    if (!nodesFile) throw new Error('CLICKHOUSE_CLUSTER_NODES is not set (cluster mode)');
    const nodes = readFileSync(nodesFile, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        const [, , replica, http] = line.trim().split(/\s+/);
        return { first: replica === '1', url: `http://127.0.0.1:${http}` };
      });
    // One replica of each shard merges (its replicas fetch the merged parts), then every replica catches up.
    for (const node of nodes.filter((n) => n.first)) {
      await run(SQL.optimize('delta'), node.url);
      await run(SQL.optimize('snapshot'), node.url);
      await run(SQL.optimize('trade'), node.url);
    }
    for (const node of nodes) {
      await run(SQL.syncReplica('delta'), node.url);
      await run(SQL.syncReplica('snapshot'), node.url);
      await run(SQL.syncReplica('trade'), node.url);
    }
    break;
  }
  case 'merges':
    console.log(await count(SQL.merges()));
    break;
  default:
    throw new Error('usage: dataset.mts exists|drop|optimize|merges');
}
