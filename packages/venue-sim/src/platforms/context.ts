import { mainFeedHeartbeat, PLATFORMS, type PlatformKey } from '@depthgate/platforms';
import type { BookEngine } from '../book/engine';
import type { SimCredentials, VerificationKeys } from '../credentials';
import type { ResolvedOptions } from '../settings';

/** What every platform module is built from. */
export interface PlatformContext {
  opts: ResolvedOptions;
  engine: BookEngine;
  credentials: SimCredentials;
  keys: VerificationKeys;
  clock: () => number;
}

/**
 * How often a platform's feed beats: the `heartbeatIntervalMs` option, else the venue's own rhythm (its descriptor's
 * `feeds.main.heartbeat`, by which the gateway and the recorder judge a feed silent); 0: never.
 */
export function feedHeartbeatMs(ctx: PlatformContext, platform: PlatformKey): number {
  return ctx.opts.heartbeatIntervalMs ?? mainFeedHeartbeat(PLATFORMS[platform])?.intervalMs ?? 0;
}

/** Parses `limit`/`offset`-style integer query values; undefined when absent, null when malformed. */
export function intParam(params: URLSearchParams, name: string): number | undefined | null {
  const v = params.get(name);
  if (v === null || v === '') return undefined;
  if (!/^-?\d+$/.test(v)) return null;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : null;
}

/** Parses a boolean query value (`true`/`false`/`1`/`0`); undefined when absent, null when malformed. */
export function boolParam(params: URLSearchParams, name: string): boolean | undefined | null {
  const v = params.get(name);
  if (v === null || v === '') return undefined;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  return null;
}

/** Parses a number query value; undefined when absent, null when malformed. */
export function numberParam(params: URLSearchParams, name: string): number | undefined | null {
  const v = params.get(name);
  if (v === null || v === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/** Opaque cursor carrying an offset (Kalshi-style). */
export function encodeCursor(offset: number): string {
  return Buffer.from(`o:${offset}`).toString('base64url');
}

export function decodeCursor(cursor: string | null): number | null {
  if (!cursor) return 0;
  const m = /^o:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString());
  return m ? Number(m[1]) : null;
}
