/**
 * Who owns which ticker (redundant recording, /work/notes/redundant-design.md §3.2; the session's decisions in
 * controller.ts). Per exchange, in Redis under the recorders' prefix:
 *
 * - `owner:{exchange}` hash: ticker → `term|state`, state `owned` (the term's writer records it), `released` (its
 *   owner stopped recording it and made everything durable: a live peer takes it without killing anything),
 *   `offered` (the same after the owner lost the ticker's book: taken like `released`, recorded as an `offer`) or
 *   `splicing` (a new owner is taking it over). Every change is a compare-and-set on the whole value (Lua), so of two
 *   recorders claiming a ticker exactly one wins. A `released` ticker that no recorder holds for an hour loses its
 *   entry (`UNHELD_KEPT_MS`; controller.ts, `dropUnheld`).
 * - `unheld:{exchange}` hash: ticker → when a recorder first saw its `released` entry held by none (wall-clock ms),
 *   shared so that a recorder's restart does not count that hour afresh; it expires when unwritten for two hours.
 * - `live:{exchange}:{term}` set: the tickers whose book the term's recorder has live (updated in batches), and
 *   `terms:{exchange}`: the terms that published a live set. A peer may be handed a ticker only where it is live.
 *
 * `SoloOwnership` is the solo mode's: this recorder owns everything, there is no peer.
 */
import type { ExchangeKey } from '@depthgate/platforms';
import type { Redis } from '@depthgate/service-kit';

export type OwnerState = 'owned' | 'released' | 'offered' | 'splicing';

export interface Owner {
  term: number;
  state: OwnerState;
}

export function formatOwner(o: Owner): string {
  return `${o.term}|${o.state}`;
}

export function parseOwner(value: string): Owner | undefined {
  const m = /^(\d+)\|(owned|released|offered|splicing)$/.exec(value);
  return m ? { term: Number(m[1]), state: m[2] as OwnerState } : undefined;
}

/**
 * Compare-and-set of many tickers: KEYS[1] the hash, ARGV[1] the expected value ('' = no owner), ARGV[2] the new
 * value ('' = no owner: the field is deleted), ARGV[3…] the tickers. Returns the tickers changed.
 */
const CAS = `
local out = {}
for i = 3, #ARGV do
  local cur = redis.call('HGET', KEYS[1], ARGV[i])
  if (cur == false and ARGV[1] == '') or cur == ARGV[1] then
    if ARGV[2] == '' then
      redis.call('HDEL', KEYS[1], ARGV[i])
    else
      redis.call('HSET', KEYS[1], ARGV[i], ARGV[2])
    end
    out[#out + 1] = ARGV[i]
  end
end
return out`;

/**
 * First-seen times of unheld tickers: KEYS[1] the hash, ARGV[1] the time, ARGV[2] the hash's TTL (ms), ARGV[3] n,
 * ARGV[4…3+n] tickers noted at that time unless already noted, the rest tickers forgotten.
 */
const NOTE_UNHELD = `
local n = tonumber(ARGV[3])
for i = 4, 3 + n do redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[1]) end
for i = 4 + n, #ARGV do redis.call('HDEL', KEYS[1], ARGV[i]) end
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;

/** Tickers per script call or SADD/SREM (a script holds Redis while it runs). */
const BATCH = 500;

export interface Ownership {
  /** Every owned ticker of an exchange and its owner. */
  owners(exchange: ExchangeKey): Promise<Map<string, Owner>>;
  /**
   * Compare-and-set: each ticker whose value is `from` (null: no owner) becomes `to` (null: no owner, its entry
   * deleted). Returns the tickers changed (the others changed owner meanwhile).
   */
  swap(exchange: ExchangeKey, tickers: readonly string[], from: Owner | null, to: Owner | null): Promise<string[]>;
  /** Claims tickers for `toTerm` (`splicing`) from `from`; the claimer confirms with `confirm` after its splice. */
  claim(exchange: ExchangeKey, tickers: readonly string[], from: Owner | null, toTerm: number): Promise<string[]>;
  /** `term|splicing` → `term|owned`. */
  confirm(exchange: ExchangeKey, tickers: readonly string[], term: number): Promise<string[]>;
  /** `term|owned` → `term|released` (or `offered`). */
  release(
    exchange: ExchangeKey,
    tickers: readonly string[],
    term: number,
    state?: 'released' | 'offered',
  ): Promise<string[]>;
  /** This term's live set: add and remove tickers. */
  setLive(exchange: ExchangeKey, term: number, add: readonly string[], remove: readonly string[]): Promise<void>;
  /** The live sets of every term that published one (dead terms included: check their leases). */
  liveSets(exchange: ExchangeKey): Promise<Map<number, Set<string>>>;
  /** Forgets a term's live set (its recorder stopped, or its lease is gone). */
  dropLive(exchange: ExchangeKey, term: number): Promise<void>;
  /**
   * A releasing term's ends of the tickers it hands over (what it produced, landed or spooled: opaque text, the
   * controller's), read by the peer that takes them. Kept for a day.
   */
  publishEnds(exchange: ExchangeKey, term: number, ends: ReadonlyMap<string, string>): Promise<void>;
  publishedEnds(exchange: ExchangeKey, term: number, tickers: readonly string[]): Promise<Map<string, string>>;
  /** When each ticker was first seen unheld (controller.ts `dropUnheld`), in wall-clock ms, as every recorder sees it. */
  unheldSince(exchange: ExchangeKey): Promise<Map<string, number>>;
  /** Notes `add` first seen unheld at `at` (a time already noted stays) and forgets `forget` (no longer unheld). */
  noteUnheld(exchange: ExchangeKey, add: readonly string[], at: number, forget: readonly string[]): Promise<void>;
}

/** How long a released term's published ends are kept. */
const ENDS_TTL_S = 86_400;
/**
 * How long a `released` ticker that no recorder holds keeps its owner entry (controller.ts, `dropUnheld`): far longer
 * than a restart, a rolling deploy or a venue listing's admission take. Counted from when a recorder first saw the
 * entry unheld (`unheldSince`, in Redis: a restart does not start it again).
 */
export const UNHELD_KEPT_MS = 3_600_000;

export class RedisOwnership implements Ownership {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private ownerKey(exchange: string): string {
    return `${this.prefix}owner:${exchange}`;
  }

  private liveKey(exchange: string, term: number): string {
    return `${this.prefix}live:${exchange}:${term}`;
  }

  private termsKey(exchange: string): string {
    return `${this.prefix}terms:${exchange}`;
  }

  /** A hash's fields whose value `parse` reads (the others left out). */
  private async hash<T>(key: string, parse: (value: string) => T | undefined): Promise<Map<string, T>> {
    const out = new Map<string, T>();
    for (const [field, text] of Object.entries(await this.redis.hgetall(key))) {
      const value = parse(text);
      if (value !== undefined) out.set(field, value);
    }
    return out;
  }

  owners(exchange: ExchangeKey): Promise<Map<string, Owner>> {
    return this.hash(this.ownerKey(exchange), parseOwner);
  }

  async swap(
    exchange: ExchangeKey,
    tickers: readonly string[],
    from: Owner | null,
    to: Owner | null,
  ): Promise<string[]> {
    const changed: string[] = [];
    for (let i = 0; i < tickers.length; i += BATCH) {
      const part = tickers.slice(i, i + BATCH);
      const r = (await this.redis.eval(
        CAS,
        1,
        this.ownerKey(exchange),
        from === null ? '' : formatOwner(from),
        to === null ? '' : formatOwner(to),
        ...part,
      )) as string[];
      changed.push(...r);
    }
    return changed;
  }

  claim(exchange: ExchangeKey, tickers: readonly string[], from: Owner | null, toTerm: number): Promise<string[]> {
    return this.swap(exchange, tickers, from, { term: toTerm, state: 'splicing' });
  }

  confirm(exchange: ExchangeKey, tickers: readonly string[], term: number): Promise<string[]> {
    return this.swap(exchange, tickers, { term, state: 'splicing' }, { term, state: 'owned' });
  }

  release(
    exchange: ExchangeKey,
    tickers: readonly string[],
    term: number,
    state: 'released' | 'offered' = 'released',
  ): Promise<string[]> {
    return this.swap(exchange, tickers, { term, state: 'owned' }, { term, state });
  }

  async setLive(exchange: ExchangeKey, term: number, add: readonly string[], remove: readonly string[]): Promise<void> {
    const key = this.liveKey(exchange, term);
    if (add.length > 0) await this.redis.sadd(this.termsKey(exchange), String(term));
    for (let i = 0; i < add.length; i += BATCH) await this.redis.sadd(key, ...add.slice(i, i + BATCH));
    for (let i = 0; i < remove.length; i += BATCH) await this.redis.srem(key, ...remove.slice(i, i + BATCH));
  }

  async liveSets(exchange: ExchangeKey): Promise<Map<number, Set<string>>> {
    const terms = (await this.redis.smembers(this.termsKey(exchange))).map(Number);
    const out = new Map<number, Set<string>>();
    for (const term of terms) out.set(term, new Set(await this.redis.smembers(this.liveKey(exchange, term))));
    return out;
  }

  async dropLive(exchange: ExchangeKey, term: number): Promise<void> {
    await this.redis.del(this.liveKey(exchange, term));
    await this.redis.srem(this.termsKey(exchange), String(term));
  }

  private unheldKey(exchange: string): string {
    return `${this.prefix}unheld:${exchange}`;
  }

  unheldSince(exchange: ExchangeKey): Promise<Map<string, number>> {
    return this.hash(this.unheldKey(exchange), (text) => (/^\d+$/.test(text) ? Number(text) : undefined));
  }

  async noteUnheld(
    exchange: ExchangeKey,
    add: readonly string[],
    at: number,
    forget: readonly string[],
  ): Promise<void> {
    const key = this.unheldKey(exchange);
    const ttl = 2 * UNHELD_KEPT_MS;
    for (let i = 0; i < add.length; i += BATCH) {
      const part = add.slice(i, i + BATCH);
      await this.redis.eval(NOTE_UNHELD, 1, key, String(at), ttl, part.length, ...part);
    }
    for (let i = 0; i < forget.length; i += BATCH)
      await this.redis.eval(NOTE_UNHELD, 1, key, String(at), ttl, 0, ...forget.slice(i, i + BATCH));
  }

  private endsKey(exchange: string, term: number): string {
    return `${this.prefix}ends:${exchange}:${term}`;
  }

  async publishEnds(exchange: ExchangeKey, term: number, ends: ReadonlyMap<string, string>): Promise<void> {
    if (ends.size === 0) return;
    const key = this.endsKey(exchange, term);
    const pairs = [...ends];
    for (let i = 0; i < pairs.length; i += BATCH) await this.redis.hset(key, ...pairs.slice(i, i + BATCH).flat());
    await this.redis.expire(key, ENDS_TTL_S);
  }

  async publishedEnds(exchange: ExchangeKey, term: number, tickers: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (let i = 0; i < tickers.length; i += BATCH) {
      const part = tickers.slice(i, i + BATCH);
      const values = await this.redis.hmget(this.endsKey(exchange, term), ...part);
      part.forEach((t, j) => {
        const v = values[j];
        if (typeof v === 'string') out.set(t, v);
      });
    }
    return out;
  }
}

/** The same in memory: one process's view (the controller's tests; the base of the solo mode's). */
export class MemoryOwnership implements Ownership {
  private readonly owned = new Map<string, Map<string, Owner>>();
  private readonly unheld = new Map<string, Map<string, number>>();
  private readonly live = new Map<string, Map<number, Set<string>>>();
  private readonly ends = new Map<string, Map<string, string>>();

  publishEnds(exchange: ExchangeKey, term: number, ends: ReadonlyMap<string, string>): Promise<void> {
    const key = `${exchange}:${term}`;
    this.ends.set(key, new Map([...(this.ends.get(key) ?? []), ...ends]));
    return Promise.resolve();
  }

  publishedEnds(exchange: ExchangeKey, term: number, tickers: readonly string[]): Promise<Map<string, string>> {
    const m = this.ends.get(`${exchange}:${term}`);
    const out = new Map<string, string>();
    for (const t of tickers) {
      const v = m?.get(t);
      if (v !== undefined) out.set(t, v);
    }
    return Promise.resolve(out);
  }

  unheldSince(exchange: ExchangeKey): Promise<Map<string, number>> {
    return Promise.resolve(new Map(this.unheld.get(exchange)));
  }

  noteUnheld(exchange: ExchangeKey, add: readonly string[], at: number, forget: readonly string[]): Promise<void> {
    let m = this.unheld.get(exchange);
    if (!m) this.unheld.set(exchange, (m = new Map()));
    for (const t of add) if (!m.has(t)) m.set(t, at);
    for (const t of forget) m.delete(t);
    return Promise.resolve();
  }

  private of(exchange: string): Map<string, Owner> {
    let m = this.owned.get(exchange);
    if (!m) this.owned.set(exchange, (m = new Map()));
    return m;
  }

  private liveOf(exchange: string): Map<number, Set<string>> {
    let m = this.live.get(exchange);
    if (!m) this.live.set(exchange, (m = new Map()));
    return m;
  }

  owners(exchange: ExchangeKey): Promise<Map<string, Owner>> {
    return Promise.resolve(new Map(this.of(exchange)));
  }

  swap(exchange: ExchangeKey, tickers: readonly string[], from: Owner | null, to: Owner | null): Promise<string[]> {
    const m = this.of(exchange);
    const changed: string[] = [];
    for (const t of tickers) {
      const cur = m.get(t);
      const same = cur === undefined ? from === null : from !== null && formatOwner(cur) === formatOwner(from);
      if (!same) continue;
      if (to === null) m.delete(t);
      else m.set(t, to);
      changed.push(t);
    }
    return Promise.resolve(changed);
  }

  claim(exchange: ExchangeKey, tickers: readonly string[], from: Owner | null, toTerm: number): Promise<string[]> {
    return this.swap(exchange, tickers, from, { term: toTerm, state: 'splicing' });
  }

  confirm(exchange: ExchangeKey, tickers: readonly string[], term: number): Promise<string[]> {
    return this.swap(exchange, tickers, { term, state: 'splicing' }, { term, state: 'owned' });
  }

  release(
    exchange: ExchangeKey,
    tickers: readonly string[],
    term: number,
    state: 'released' | 'offered' = 'released',
  ): Promise<string[]> {
    return this.swap(exchange, tickers, { term, state: 'owned' }, { term, state });
  }

  setLive(exchange: ExchangeKey, term: number, add: readonly string[], remove: readonly string[]): Promise<void> {
    const sets = this.liveOf(exchange);
    let set = sets.get(term);
    if (!set) sets.set(term, (set = new Set()));
    for (const t of add) set.add(t);
    for (const t of remove) set.delete(t);
    return Promise.resolve();
  }

  liveSets(exchange: ExchangeKey): Promise<Map<number, Set<string>>> {
    return Promise.resolve(new Map([...this.liveOf(exchange)].map(([term, set]) => [term, new Set(set)])));
  }

  dropLive(exchange: ExchangeKey, term: number): Promise<void> {
    this.liveOf(exchange).delete(term);
    return Promise.resolve();
  }
}

/** Solo mode: one recorder, term 0, owns whatever it claims; nobody could take a ticker, so nothing is released. */
export class SoloOwnership extends MemoryOwnership {
  override release(): Promise<string[]> {
    return Promise.resolve([]);
  }

  override setLive(): Promise<void> {
    return Promise.resolve();
  }
}
