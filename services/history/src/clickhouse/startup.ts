import type { Logger } from '@depthgate/service-kit';
import { loggableClickHouseUrl, type ClickHouse } from './client';
import { classifyClickHouseError } from './errors';
import { MigrationError, runMigrations, type MigrationResult } from './migrations';

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
