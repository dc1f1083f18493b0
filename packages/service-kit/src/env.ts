import { readFileSync } from 'node:fs';
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

/** An integer in `bounds`; unset or blank: the default (as every other setting), never 0. */
export const envInt = (defaultValue: number, bounds: { min?: number; max?: number } = {}) =>
  envOptionalInt(bounds).transform((v) => v ?? defaultValue);

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

/**
 * A URL (without a trailing slash); `refuse` names what is wrong with one the setting cannot use. A refusal never
 * shows the value: a URL may carry a password (`redis://user:password@host`).
 */
export const envUrl = (defaultValue: string, refuse: (url: URL) => string | undefined = () => undefined) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      const s = v === undefined || v.trim() === '' ? defaultValue : v.trim();
      let url: URL;
      try {
        url = new URL(s);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'not a URL' });
        return z.NEVER;
      }
      const problem = refuse(url);
      if (problem !== undefined) {
        ctx.addIssue({ code: 'custom', message: problem });
        return z.NEVER;
      }
      return url.toString().replace(/\/$/, '');
    });

/** The schemes the WebSocket library (`ws`) connects to; it takes http and https as ws and wss. */
const WS_SCHEMES = new Set(['ws:', 'wss:', 'http:', 'https:']);

/**
 * A WebSocket URL as the `ws` library takes it: ws:// or wss:// (http:// and https:// read as those), without a
 * #fragment. Anything else it refuses at every connection attempt, so the setting refuses it at start.
 */
export const envWsUrl = (defaultValue: string) =>
  envUrl(defaultValue, (url) =>
    !WS_SCHEMES.has(url.protocol)
      ? 'not a WebSocket URL (ws:// or wss://)'
      : url.hash !== ''
        ? 'a WebSocket URL has no #fragment'
        : undefined,
  );

/**
 * An HTTP service's base URL: http:// or https://, without a ?query or #fragment (paths are appended to it). Anything
 * else would fail, or go somewhere else, at every request, so the setting refuses it at start.
 */
export const envHttpUrl = (defaultValue: string) =>
  envUrl(defaultValue, (url) =>
    url.protocol !== 'http:' && url.protocol !== 'https:'
      ? 'not an HTTP URL (http:// or https://)'
      : url.search !== '' || url.hash !== ''
        ? 'a base URL has no ?query or #fragment'
        : undefined,
  );

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

/**
 * A secret given inline (`NAME`) or as a mounted file (`NAME_FILE`, read once, trimmed). Both set is a mistake;
 * an unreadable file too: each adds an issue instead of throwing, so a configuration lists every problem at once.
 * Shared by every deployable that holds upstream credentials (gateway, recorder).
 */
export function secret(env: Readonly<Record<string, unknown>>, name: string, issues: string[]): string | undefined {
  const direct = env[name] as string | undefined;
  const file = env[`${name}_FILE`] as string | undefined;
  if (direct !== undefined && file !== undefined) issues.push(`${name}: set either ${name} or ${name}_FILE, not both`);
  if (direct !== undefined) return direct;
  if (file === undefined) return undefined;
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    issues.push(`${name}_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    return undefined;
  }
}

/** All of a credential's parts, or none; a partial set is a configuration error, not a silent unsigned call. */
export function group<T>(
  name: string,
  parts: Record<string, string | undefined>,
  build: (p: Record<string, string>) => T,
  issues: string[],
): T | undefined {
  const given = Object.entries(parts).filter(([, v]) => v !== undefined);
  if (given.length === 0) return undefined;
  const missing = Object.entries(parts)
    .filter(([, v]) => v === undefined)
    .map(([k]) => k);
  if (missing.length > 0) {
    issues.push(`${name} credentials are incomplete: missing ${missing.join(', ')}`);
    return undefined;
  }
  return build(parts as Record<string, string>);
}
