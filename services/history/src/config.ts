import { z } from 'zod';
import { authEnvShape } from '@depthgate/auth';
import { envBool, envInt, envLogLevel, envString, parseEnv } from '@depthgate/service-kit';

/** Every history-service setting, parsed once from the environment. README.md lists them with their defaults. */
export const historyEnvSchema = z.object({
  ...authEnvShape,
  HISTORY_PORT: envInt(7081, { min: 0, max: 65535 }),
  HISTORY_HOST: envString('127.0.0.1'),
  LOG_LEVEL: envLogLevel(),
  ACCESS_LOG: envBool(true),
  /** After SIGTERM: readiness turns red, then this long later new connections are refused. */
  SHUTDOWN_DELAY_MS: envInt(0, { min: 0, max: 120_000 }),
  /** After that, in-flight requests get this long to finish. */
  DRAIN_TIMEOUT_MS: envInt(15_000, { min: 0, max: 600_000 }),
});

export type HistoryConfig = z.output<typeof historyEnvSchema>;

export function loadConfig(env: Record<string, string | undefined> = process.env): HistoryConfig {
  return parseEnv(historyEnvSchema, env);
}
