import { z } from 'zod';

/**
 * Configuration helpers. Each deployable parses one zod schema from the environment, once, in its config.ts;
 * nothing else reads process.env. Every setting has a default that works for local development.
 */
export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid configuration:\n  ${issues.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

export function parseEnv<S extends z.ZodType>(schema: S, env: Record<string, string | undefined>): z.output<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`));
}

export const envInt = (defaultValue: number, bounds: { min?: number; max?: number } = {}) =>
  z.coerce
    .number()
    .int()
    .min(bounds.min ?? Number.MIN_SAFE_INTEGER)
    .max(bounds.max ?? Number.MAX_SAFE_INTEGER)
    .default(defaultValue);

export const envOptionalInt = (bounds: { min?: number; max?: number } = {}) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return undefined;
      const n = Number(v);
      if (
        !Number.isInteger(n) ||
        n < (bounds.min ?? Number.MIN_SAFE_INTEGER) ||
        n > (bounds.max ?? Number.MAX_SAFE_INTEGER)
      ) {
        ctx.addIssue({
          code: 'custom',
          message: `expected an integer in [${bounds.min ?? '-∞'}, ${bounds.max ?? '∞'}]`,
        });
        return z.NEVER;
      }
      return n;
    });

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off']);

export const envBool = (defaultValue: boolean) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return defaultValue;
      const s = v.trim().toLowerCase();
      if (TRUE.has(s)) return true;
      if (FALSE.has(s)) return false;
      ctx.addIssue({ code: 'custom', message: 'expected true or false' });
      return z.NEVER;
    });

/** Comma-separated list; blanks dropped. */
export const envList = (defaultValue: string[] = []) =>
  z
    .string()
    .optional()
    .transform((v) =>
      v === undefined || v.trim() === ''
        ? defaultValue
        : v
            .split(',')
            .map((s) => s.trim())
            .filter((s) => s.length > 0),
    );

export const envUrl = (defaultValue: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      const s = v === undefined || v.trim() === '' ? defaultValue : v.trim();
      try {
        return new URL(s).toString().replace(/\/$/, '');
      } catch {
        ctx.addIssue({ code: 'custom', message: `not a URL: ${s}` });
        return z.NEVER;
      }
    });

export const envString = (defaultValue: string) =>
  z
    .string()
    .optional()
    .transform((v) => (v === undefined || v === '' ? defaultValue : v));

export const envOptionalString = () =>
  z
    .string()
    .optional()
    .transform((v) => (v === undefined || v === '' ? undefined : v));

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const envLogLevel = () => z.enum(LOG_LEVELS).default('info');
