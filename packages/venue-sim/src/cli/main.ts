import path from 'node:path';
import { parseArgs } from 'node:util';
import { createLogger, type Logger } from '@depthgate/service-kit';
import { BOOK_PLATFORMS, DEFAULT_TOPOLOGY } from '../default-topology';
import { writeEnvFile } from '../env';
import { checkPlatformNames, type SimulatorOptions } from '../options';
import { startSimulator } from '../simulator';
import type { Simulator } from '../types';

export class UsageError extends Error {}

export const USAGE = `usage: venue-sim [options]

  --port P                    control port; platform hosts listen on P+1, P+2, … (default 7090; 0 = free ports)
  --seed N                    seed of catalogues and book processes (default 42)
  --write-env FILE            write the upstream variables to FILE and the secrets next to it (mode 0600)
  --updates-per-second N      book updates per second across all tickers (default 50; 0 = none)
  --changes-per-update N      levels changed per update (default 1)
  --platforms a,b             platforms whose books move (default all: ${BOOK_PLATFORMS.join(',')})
  --tickers p=N,...           instruments per platform (any of its names), e.g. venue-b=20,gemini=6
  --retention-ms N            how long book events stay queryable (default 60000)
  --ibkr-idle-timeout-ms N    IBKR session idle timeout without /tickle (default 300000)
  --heartbeat-interval-ms N   every feed's heartbeat interval (default: each venue's own; 0 = none)
  --max-recorded-requests N   requests kept for /control/requests (default 100000; 0 = record none);
                              keep it small under load, the record is heap the garbage collector walks
  --max-feed-subscriptions N  (channel, market) pairs one feed connection may hold (default 10000)
  --kalshi-orderbook-requires-auth   Kalshi's orderbook endpoint needs a signature
  --no-rate-limits            no platform rate limits
  --no-edge                   no CDN-style headers (Set-Cookie, Server, CF-Ray) and no gzip
  --start-paused              books start paused (POST /control/books/resume)
  --log-level L               pino level (default info)
  --help`;

function int(flag: string, v: string | undefined, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max)
    throw new UsageError(`${flag} must be an integer in [${min}, ${max}]`);
  return Number(v);
}

/** `--platforms a,b`: names of the simulator's platforms, checked as startSimulator checks them, here a usage error. */
function platformNames(list: string): string[] {
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  try {
    checkPlatformNames(names, DEFAULT_TOPOLOGY);
  } catch (err) {
    throw new UsageError(`--platforms: ${(err as Error).message}`);
  }
  return names;
}

export interface CliConfig {
  options: SimulatorOptions;
  writeEnv?: string;
  logLevel: string;
  help: boolean;
}

export function parseCli(argv: string[]): CliConfig {
  // `pnpm --filter @depthgate/venue-sim start -- --port 7190` passes the `--` through.
  const args = argv[0] === '--' ? argv.slice(1) : argv;
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        port: { type: 'string' },
        seed: { type: 'string' },
        'write-env': { type: 'string' },
        'updates-per-second': { type: 'string' },
        'changes-per-update': { type: 'string' },
        platforms: { type: 'string' },
        tickers: { type: 'string' },
        'retention-ms': { type: 'string' },
        'heartbeat-interval-ms': { type: 'string' },
        'ibkr-idle-timeout-ms': { type: 'string' },
        'max-recorded-requests': { type: 'string' },
        'max-feed-subscriptions': { type: 'string' },
        'kalshi-orderbook-requires-auth': { type: 'boolean', default: false },
        'no-rate-limits': { type: 'boolean', default: false },
        'no-edge': { type: 'boolean', default: false },
        'start-paused': { type: 'boolean', default: false },
        'log-level': { type: 'string', default: 'info' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const tickers: Record<string, number> = {};
  for (const pair of (values.tickers ?? '').split(',').filter(Boolean)) {
    const [name = '', n] = pair.split('=');
    if (!DEFAULT_TOPOLOGY.resolveBookPlatform(name)) throw new UsageError(`--tickers: unknown platform "${name}"`);
    tickers[name] = int(`--tickers ${name}`, n, 1, 5000) as number;
  }
  const options: SimulatorOptions = {
    ports: { base: int('--port', values.port, 0, 65525) ?? 7090 },
    seed: int('--seed', values.seed, 0, 2 ** 31 - 1) ?? 42,
    ...(values['updates-per-second'] !== undefined
      ? { updatesPerSecond: int('--updates-per-second', values['updates-per-second'], 0, 1_000_000) }
      : {}),
    ...(values['changes-per-update'] !== undefined
      ? { changesPerUpdate: int('--changes-per-update', values['changes-per-update'], 1, 50) }
      : {}),
    ...(values.platforms ? { platforms: platformNames(values.platforms) } : {}),
    ...(Object.keys(tickers).length ? { tickers } : {}),
    ...(values['retention-ms'] !== undefined
      ? { historyRetentionMs: int('--retention-ms', values['retention-ms'], 1000, 86_400_000) }
      : {}),
    ...(values['heartbeat-interval-ms'] !== undefined
      ? { heartbeatIntervalMs: int('--heartbeat-interval-ms', values['heartbeat-interval-ms'], 0, 3_600_000) }
      : {}),
    ...(values['ibkr-idle-timeout-ms'] !== undefined
      ? { ibkrIdleTimeoutMs: int('--ibkr-idle-timeout-ms', values['ibkr-idle-timeout-ms'], 1, 86_400_000) }
      : {}),
    ...(values['max-recorded-requests'] !== undefined
      ? int('--max-recorded-requests', values['max-recorded-requests'], 0, 10_000_000) === 0
        ? { recordRequests: false }
        : { maxRecordedRequests: Number(values['max-recorded-requests']) }
      : {}),
    ...(values['max-feed-subscriptions'] !== undefined
      ? {
          maxFeedSubscriptions: int('--max-feed-subscriptions', values['max-feed-subscriptions'], 1, 10_000_000),
        }
      : {}),
    ...(values['kalshi-orderbook-requires-auth'] ? { kalshiOrderbookRequiresAuth: true } : {}),
    ...(values['no-rate-limits'] ? { rateLimits: false as const } : {}),
    ...(values['no-edge'] ? { edge: false } : {}),
    ...(values['start-paused'] ? { startPaused: true } : {}),
  };
  return {
    options,
    ...(values['write-env'] ? { writeEnv: values['write-env'] } : {}),
    logLevel: values['log-level'] ?? 'info',
    help: values.help ?? false,
  };
}

/** Starts the simulator as the CLI does (logger, env file); the caller owns signals and exit. */
export async function runCli(
  config: CliConfig,
  destination?: NodeJS.WritableStream,
): Promise<{ sim: Simulator; logger: Logger }> {
  const logger = createLogger({
    name: 'venue-sim',
    level: config.logLevel,
    sync: true,
    ...(destination ? { destination } : {}),
  });
  const sim = await startSimulator({ ...config.options, logger });
  if (config.writeEnv) {
    writeEnvFile(config.writeEnv, sim.env(path.dirname(path.resolve(config.writeEnv))));
    logger.info({ file: config.writeEnv }, 'wrote upstream variables and test credentials');
  }
  logger.info({ control: sim.urls.control, ready: `${sim.urls.control}/ready` }, 'ready');
  return { sim, logger };
}
