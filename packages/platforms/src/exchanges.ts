/**
 * The recorded exchanges of a registry: the history service's vocabulary (`venue_b`, `venue_c`, …), derived from the
 * platforms whose descriptor declares an `exchange`. Every list of recorded exchanges in the product — the
 * recorder's adapters, the simulator's books, the history routes and their messages, the stored Enum8, the clients'
 * and the Explorer's lists — comes from one `Exchanges` built here (docs/ADD_NEW_PLATFORM.md, "Recording it").
 *
 * Deployables take the product's (`EXCHANGES`) by default; a test that adds a fixture platform builds its own from
 * its registry and hands it to them.
 */
import type { Registry } from './env';

/** Recorded history begins on 7 March 2026 (spec, Limits). */
export const HISTORY_START_MS = Date.UTC(2026, 2, 7);

/**
 * The grammar of an exchange key: the spec's are `venue_b`, `venue_a_us`. Checked here once, so every layer may
 * render a key into a path, a metric label, an SQL literal or an environment variable name (`RECORDER_VENUE_B_…`).
 */
export const EXCHANGE_KEY_PATTERN = /^[a-z][a-z0-9_]{0,31}$/;
/** Aliases are real names as people type them: `kalshi`, `polymarket-us`. */
const ALIAS_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;

/** One recorded exchange. */
export interface ExchangeInfo<K extends string = string> {
  /** The history service's key: `venue_b`. */
  key: K;
  /** The code it is stored under (ClickHouse Enum8: 1–127, never renumbered or reused). */
  code: number;
  /** Real names accepted wherever the key is (history paths, `--exchanges`): `kalshi`. Lower case. */
  aliases: readonly string[];
  /** Its platform's neutral key: `venue-b`. */
  platform: string;
  /** Its platform's real name, for people: `Kalshi`. */
  title: string;
}

export class Exchanges<K extends string = string> {
  /** By stored code. */
  readonly list: readonly ExchangeInfo<K>[];
  /** Keys by stored code. */
  readonly keys: readonly K[];
  readonly codes: Readonly<Record<K, number>>;
  /** Alias → key. */
  readonly aliases: Readonly<Record<string, K>>;
  /** Key → its platform's neutral key. */
  readonly platforms: Readonly<Record<K, string>>;
  private readonly byName = new Map<string, K>();

  constructor(list: readonly ExchangeInfo<K>[]) {
    this.list = [...list].sort((a, b) => a.code - b.code);
    this.keys = this.list.map((e) => e.key);
    this.codes = Object.fromEntries(this.list.map((e) => [e.key, e.code])) as Record<K, number>;
    this.platforms = Object.fromEntries(this.list.map((e) => [e.key, e.platform])) as Record<K, string>;
    const aliases: Record<string, K> = {};
    const problems: string[] = [];
    const codes = new Set<number>();
    for (const e of this.list) {
      if (!EXCHANGE_KEY_PATTERN.test(e.key)) problems.push(`exchange key "${e.key}" is not ${EXCHANGE_KEY_PATTERN}`);
      if (!Number.isInteger(e.code) || e.code < 1 || e.code > 127) {
        problems.push(`exchange ${e.key}: code ${e.code} is not an Enum8 code from 1 to 127`);
      }
      if (codes.has(e.code)) problems.push(`exchange ${e.key}: code ${e.code} is taken`);
      codes.add(e.code);
      for (const name of [e.key, ...e.aliases]) {
        if (name !== e.key && !ALIAS_PATTERN.test(name))
          problems.push(`exchange ${e.key}: alias "${name}" is not lower case`);
        if (this.byName.has(name)) problems.push(`exchange name "${name}" names two exchanges`);
        this.byName.set(name, e.key);
        if (name !== e.key) aliases[name] = e.key;
      }
    }
    if (problems.length > 0) throw new Error(`the recorded exchanges are inconsistent: ${problems.join('; ')}`);
    this.aliases = aliases;
  }

  /** The exchange a name stands for (a key or an alias, any case), or undefined. */
  canonical(name: string): K | undefined {
    return this.byName.get(name.toLowerCase());
  }

  has(key: string): key is K {
    return Object.hasOwn(this.codes, key);
  }

  info(key: K): ExchangeInfo<K> {
    const found = this.list.find((e) => e.key === key);
    if (!found) throw new Error(`not a recorded exchange: ${key}`);
    return found;
  }

  /** The key stored under an Enum8 code (the recorder's per-exchange counters are indexed by code − 1). */
  byCode(code: number): K | undefined {
    return this.list.find((e) => e.code === code)?.key;
  }

  /** For messages: `venue_b (kalshi), venue_c (gemini), venue_a_us (polymarket_us, polymarket-us)`. */
  describe(): string {
    return this.list.map((e) => (e.aliases.length > 0 ? `${e.key} (${e.aliases.join(', ')})` : e.key)).join(', ');
  }

  /** The environment variable prefix of an exchange's settings: `venue_a_us` → `VENUE_A_US`. */
  static envName(key: string): string {
    return key.toUpperCase();
  }
}

/** The recorded exchanges of a registry (its platforms whose descriptor has an `exchange`). */
export function exchangesOf(registry: Registry): Exchanges {
  const list: ExchangeInfo[] = [];
  for (const d of Object.values(registry)) {
    if (d.exchange === undefined) continue;
    list.push({
      key: d.exchange.key,
      code: d.exchange.code,
      aliases: d.exchange.aliases,
      platform: d.key,
      title: d.title,
    });
  }
  return new Exchanges(list);
}

/**
 * The client's and the Explorer's list of exchanges, as TypeScript source (packages/client/src/exchanges.ts). The
 * client is published without dependencies, so it cannot import the registry: the build writes this file from it
 * (`pnpm run generate`, run by `pnpm run build`), and a unit test fails when the committed file is stale.
 */
export function renderClientExchanges(exchanges: Exchanges): string {
  // Single-quoted, as the repository's formatter writes them (the file passes its check unchanged).
  const q = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const entries = exchanges.list.map(
    (e) => `  { key: ${q(e.key)}, name: ${q(e.title)}, aliases: [${e.aliases.map(q).join(', ')}] },`,
  );
  return `// Generated from the platform registry (packages/platforms) by \`pnpm run generate\`; do not edit.
/** The history service's exchanges, by stored code: key, the platform's real name, and the aliases paths accept. */
export const EXCHANGES = [
${entries.join('\n')}
] as const;

/** An exchange key of the history service. */
export type Exchange = (typeof EXCHANGES)[number]['key'];
`;
}

/**
 * The same list as Python source (clients/python/depthgate/exchanges.py), for the Python client, which is standard
 * library only and cannot read the registry either; written and checked with the TypeScript one.
 */
export function renderPythonExchanges(exchanges: Exchanges): string {
  const q = (text: string) => JSON.stringify(text);
  const entries = exchanges.list.map(
    (e) =>
      `    {"key": ${q(e.key)}, "name": ${q(e.title)}, "aliases": (${e.aliases.map(q).join(', ')}${e.aliases.length === 1 ? ',' : ''})},`,
  );
  return `# Generated from the platform registry (packages/platforms) by \`pnpm run generate\`; do not edit.
"""The history service's exchanges, by stored code: key, the platform's real name, and the aliases paths accept."""

from typing import Dict, Tuple, Union

EXCHANGES: Tuple[Dict[str, Union[str, Tuple[str, ...]]], ...] = (
${entries.join('\n')}
)
`;
}
