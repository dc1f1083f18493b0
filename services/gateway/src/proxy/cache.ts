import type { OutgoingHttpHeaders } from 'node:http';
import type { CacheRule } from '../config';

export interface CachedResponse {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Buffer;
  storedAt: number;
  expiresAt: number;
}

/** A route pattern, split: `*` matches one segment, `**` any rest (including nothing). */
function matchesSegments(pattern: readonly string[], segments: readonly string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '**') return true;
    if (i >= segments.length) return false;
    if (pattern[i] !== '*' && pattern[i] !== segments[i]) return false;
  }
  return pattern.length === segments.length;
}

/** The opt-in micro-cache rules, split once and grouped by platform. */
export class CacheRules {
  private readonly byPlatform = new Map<string, { pattern: string[]; ttlMs: number }[]>();

  constructor(rules: readonly CacheRule[]) {
    for (const rule of rules) {
      const list = this.byPlatform.get(rule.platform) ?? [];
      list.push({ pattern: rule.pattern.split('/').slice(1), ttlMs: rule.ttlMs });
      this.byPlatform.set(rule.platform, list);
    }
  }

  /** TTL in ms for a caller-facing resource (its decoded segments); 0: not cached. */
  ttlFor(platform: string, segments: readonly string[]): number {
    const rules = this.byPlatform.get(platform);
    if (rules) for (const rule of rules) if (matchesSegments(rule.pattern, segments)) return rule.ttlMs;
    return 0;
  }
}

function directives(value: string | string[] | number | undefined): Map<string, string> {
  const out = new Map<string, string>();
  const text = Array.isArray(value) ? value.join(',') : String(value ?? '');
  for (const part of text.split(',')) {
    const [k, v] = part.trim().toLowerCase().split('=');
    if (k) out.set(k, (v ?? '').replace(/"/g, ''));
  }
  return out;
}

/**
 * How long an upstream response may be kept, given the route's TTL and the upstream's `Cache-Control`
 * (`no-store`, `no-cache` and `private` forbid it; `s-maxage`/`max-age` can only shorten it).
 */
export function storableTtl(routeTtlMs: number, upstreamCacheControl: string | string[] | number | undefined): number {
  const d = directives(upstreamCacheControl);
  if (d.has('no-store') || d.has('no-cache') || d.has('private')) return 0;
  const maxAge = d.get('s-maxage') ?? d.get('max-age');
  if (maxAge !== undefined && /^\d+$/.test(maxAge)) return Math.min(routeTtlMs, Number(maxAge) * 1000);
  return routeTtlMs;
}

/**
 * How old a cached answer the caller accepts: `no-cache`/`no-store` → none (ms 0), `max-age=N` → N s,
 * otherwise any fresh entry (Infinity).
 */
export function acceptableAgeMs(requestCacheControl: string | undefined): number {
  if (requestCacheControl === undefined) return Number.POSITIVE_INFINITY;
  const d = directives(requestCacheControl);
  if (d.has('no-cache') || d.has('no-store')) return 0;
  const maxAge = d.get('max-age');
  if (maxAge !== undefined && /^\d+$/.test(maxAge)) return Number(maxAge) * 1000;
  return Number.POSITIVE_INFINITY;
}

/** What an entry costs beyond its key, body and headers (the objects holding it, its place in the map), roughly. */
const ENTRY_OVERHEAD = 512;

/** Entries looked at per `set` for having expired: an expired entry leaves within a pass, read again or not. */
const SWEEP_PER_SET = 4;

function headerBytes(headers: OutgoingHttpHeaders): number {
  let n = 0;
  for (const [name, value] of Object.entries(headers)) n += name.length + String(value ?? '').length;
  return n;
}

interface Stored {
  entry: CachedResponse;
  /** Bytes it is counted for: key (up to ~16 KB: the query and the caller's Accept headers), body, headers. */
  size: number;
}

/**
 * The micro-cache: fresh entries only, least recently used evicted first, bounded in bytes (keys and headers
 * counted with the bodies). Each `set` also looks at the next few entries of a sweep through all of them, dropping
 * those that expired.
 */
export class MicroCache {
  private readonly entries = new Map<string, Stored>();
  private bytes = 0;
  /** Where the sweep goes on from (a Map's iterator also visits entries added or moved since it began). */
  private sweep: Iterator<[string, Stored]> | undefined;

  constructor(private readonly maxBytes: number) {}

  get(key: string, now: number, maxAgeMs: number): CachedResponse | undefined {
    const stored = this.entries.get(key);
    if (!stored) return undefined;
    const { entry } = stored;
    if (now >= entry.expiresAt) {
      this.delete(key);
      return undefined;
    }
    if (now - entry.storedAt > maxAgeMs) return undefined;
    this.entries.delete(key);
    this.entries.set(key, stored);
    return entry;
  }

  set(key: string, entry: CachedResponse): void {
    this.sweepExpired(entry.storedAt);
    const size = key.length + entry.body.length + headerBytes(entry.headers) + ENTRY_OVERHEAD;
    if (size > this.maxBytes) return;
    this.delete(key);
    this.entries.set(key, { entry, size });
    this.bytes += size;
    for (const [oldest, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= old.size;
    }
  }

  private sweepExpired(now: number): void {
    for (let i = 0; i < SWEEP_PER_SET; i++) {
      const next = (this.sweep ??= this.entries.entries()).next();
      if (next.done) {
        this.sweep = undefined; // a pass is complete: the next set begins another
        return;
      }
      const [key, stored] = next.value;
      if (now >= stored.entry.expiresAt) this.delete(key);
    }
  }

  private delete(key: string): void {
    const old = this.entries.get(key);
    if (!old) return;
    this.entries.delete(key);
    this.bytes -= old.size;
  }

  get size(): number {
    return this.entries.size;
  }
}
