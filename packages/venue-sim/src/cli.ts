#!/usr/bin/env node
/**
 * The venue simulator as a process (`pnpm --filter @depthgate/venue-sim start`, `./dev up --sim`). Logs JSON lines;
 * stops cleanly on SIGTERM/SIGINT. Exit status: 0 stopped, 1 failed to start, 2 bad arguments.
 */
import { parseCli, runCli, USAGE, UsageError } from './cli/main';

async function main(): Promise<void> {
  let config;
  try {
    config = parseCli(process.argv.slice(2));
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`venue-sim: ${err.message}\n${USAGE}`);
      process.exit(2);
    }
    throw err;
  }
  if (config.help) {
    console.log(USAGE);
    return;
  }
  const { sim, logger } = await runCli(config);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    sim
      .stop()
      .then(() => {
        logger.info({}, 'stopped');
        process.exit(0);
      })
      .catch((err: unknown) => {
        logger.error({ err }, 'stop failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(`venue-sim: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
