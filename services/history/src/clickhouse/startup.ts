import type { Logger } from '@depthgate/service-kit';
import { loggableClickHouseUrl, type ClickHouse } from './client';
import { classifyClickHouseError } from './errors';
import { join, lit, sql } from './literals';
import { MigrationError, runMigrations, type MigrationResult } from './migrations';
import { READ_COLUMNS } from './schema';

/**
 * Applies the migrations, retrying while ClickHouse is unreachable (it may start after us) for up to `timeoutMs`.
 * A migration that fails for another reason (bad SQL, changed checksum, permissions) fails at once.
 */
export async function migrateWhenReachable(
  ch: ClickHouse,
  options: { url: string; timeoutMs: number; logger?: Logger },
): Promise<MigrationResult> {
  const deadline = Date.now() + options.timeoutMs;
  let delay = 250;
  let warned = false;
  for (;;) {
    try {
      return await runMigrations(ch, { logger: options.logger });
    } catch (err) {
      const failure = classifyClickHouseError((err as MigrationError).cause ?? err);
      const retryable =
        failure.kind === 'unavailable' && !(err instanceof MigrationError && failure.code !== undefined);
      if (!retryable || Date.now() + delay > deadline) {
        const where = loggableClickHouseUrl(options.url);
        throw new Error(
          retryable
            ? `ClickHouse at ${where} is not reachable (${failure.message}); gave up after ${options.timeoutMs} ms`
            : `could not apply the ClickHouse migrations at ${where} (database ${ch.database}): ${(err as Error).message}`,
          { cause: err },
        );
      }
      if (!warned) {
        options.logger?.warn({ url: loggableClickHouseUrl(options.url) }, 'waiting for ClickHouse');
        warned = true;
      }
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 2000);
    }
  }
}

/**
 * Checks that the columns window queries read in RowBinary have the types their decoder assumes
 * (schema.ts READ_COLUMNS). Throws, naming every difference, when they do not: a table altered by hand, or a
 * migration that changed a type without the decoder following, must stop the service rather than be misread.
 */
export async function verifyReadColumns(ch: ClickHouse): Promise<void> {
  const tables = Object.values(READ_COLUMNS).map((k) => k.table);
  const rs = await ch.data.query({
    query: sql`SELECT table, name, type FROM system.columns
WHERE database = ${lit.name(ch.database)} AND table IN (${join(
      tables.map((t) => lit.name(t)),
      ', ',
    )})`.text,
    format: 'JSONEachRow',
  });
  const found = new Map(
    (await rs.json<{ table: string; name: string; type: string }>()).map((c) => [`${c.table}.${c.name}`, c.type]),
  );
  const problems: string[] = [];
  for (const { table, columns } of Object.values(READ_COLUMNS)) {
    for (const [name, type] of columns) {
      const actual = found.get(`${table}.${name}`);
      if (actual !== type) problems.push(`${table}.${name} is ${actual ?? 'missing'}, expected ${type}`);
    }
  }
  if (problems.length > 0)
    throw new Error(
      `the ClickHouse tables in ${ch.database} do not match what the service reads: ${problems.join('; ')}`,
    );
}
