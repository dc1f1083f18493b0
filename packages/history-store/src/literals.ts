/**
 * The one way values reach SQL text.
 *
 * ClickHouse 18.16 has no server-side query parameters, so values are rendered as literals. Only this module does
 * that, and only from validated types: safe integers, members of our enums, strings that match the ticker grammar,
 * identifiers, query ids. SQL is built with the `sql` template tag, which accepts nothing but `Sql` fragments made
 * here: a plain string can never be interpolated by mistake (it throws at run time and fails to type-check).
 */
import { EXCHANGE_KEY_PATTERN, type ExchangeKey } from '@depthgate/platforms';

/**
 * Characters a ticker (or a ticker prefix) may contain on any recorded exchange; at most 128 of them (Polymarket
 * CLOB's outcome token ids are decimal numbers of about 77 digits). The same grammar: auth's TICKER_PREFIX_PATTERN,
 * the Explorer's copy (packages/explorer/src/state.ts).
 */
export const TICKER_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;
/** Database, table and column names. */
export const IDENTIFIER_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
/** Venue text kept as it came (a trade id, a venue's side): printable ASCII without tab or backslash, 0–128 chars. */
export const VENUE_TEXT_PATTERN = /^[\x20-\x5b\x5d-\x7e]{0,128}$/;
/**
 * A venue's own ordering of a message, kept as text (`venue_seq`): Kalshi's `sid:seq`, Coinbase's `sequence`, a
 * checksum; letters, digits and `:._/+=-`, at most 48 characters (VENUE_SEQ_BYTES), '' where the venue has none.
 * Nothing in it needs quoting in JSON or CSV.
 */
export const VENUE_SEQ_PATTERN = /^[A-Za-z0-9:._/+=-]{0,48}$/;
/** Query ids we generate (`dg-` + a UUID) and any similar token. */
const QUERY_ID_PATTERN = /^[A-Za-z0-9_-]{1,100}$/;
/** A cluster's name in the servers' `remote_servers` (operators name them `replicated`, `all-sharded`, …). */
export const CLUSTER_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
/** A ZooKeeper path of a replicated table: absolute, with `{shard}`-style macros. */
const ZOOKEEPER_PATH_PATTERN = /^(\/[A-Za-z0-9_.{}-]+)+$/;
/** A replica's name in a replicated engine: macros and a separator (`{shard}-{replica}`). */
const REPLICA_NAME_PATTERN = /^[A-Za-z0-9_.{}-]{1,100}$/;

export const SIDES = ['bid', 'ask'] as const;
export type Side = (typeof SIDES)[number];

const INT64_MIN = -(2n ** 63n);
const UINT64_MAX = 2n ** 64n - 1n;

export class LiteralError extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = 'LiteralError';
  }
}

/** Only this module holds the token, so only this module can make an `Sql`. */
const TOKEN = Symbol('sql');

/** A piece of SQL text that is safe by construction. */
export class Sql {
  readonly #text: string;
  constructor(token: symbol, text: string) {
    if (token !== TOKEN) throw new LiteralError('Sql fragments are made by sql`` and lit.* only');
    this.#text = text;
  }
  get text(): string {
    return this.#text;
  }
  toString(): string {
    return this.#text;
  }
}

const trusted = (text: string): Sql => new Sql(TOKEN, text);

/**
 * Escapes any JavaScript string into a ClickHouse single-quoted string literal that reads back as the same UTF-8
 * bytes. Backslash and quote are escaped; every control character (including NUL) becomes `\xHH`. The validated
 * helpers below only ever pass grammar-checked strings, so this is defence in depth — and it is fuzzed on its own.
 */
export function quoteString(value: string): string {
  let out = "'";
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x5c) out += '\\\\';
    else if (c === 0x27) out += "\\'";
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += value[i];
  }
  return `${out}'`;
}

function checkedString(kind: string, pattern: RegExp, value: unknown): string {
  if (typeof value !== 'string' || !pattern.test(value)) {
    throw new LiteralError(`not a valid ${kind}: ${JSON.stringify(String(value)).slice(0, 80)}`);
  }
  return value;
}

/** Validated literals. Each throws LiteralError on anything outside its type. */
export const lit = {
  /** A safe integer (number) or a bigint in the Int64/UInt64 range. */
  int(value: number | bigint): Sql {
    if (typeof value === 'number') {
      if (!Number.isSafeInteger(value)) throw new LiteralError(`not a safe integer: ${String(value)}`);
      return trusted(String(value));
    }
    if (typeof value === 'bigint') {
      if (value < INT64_MIN || value > UINT64_MAX) throw new LiteralError(`integer out of range: ${value}`);
      return trusted(value.toString());
    }
    throw new LiteralError(`not an integer: ${typeof value}`);
  },
  /**
   * An exchange key (the exchange grammar of @depthgate/platforms). Which exchanges exist is the stored Enum8's to
   * say: ClickHouse refuses a member it does not have, and the services check the Enum8 against their registry at
   * start-up (startup.ts, verifyExchanges).
   */
  exchange(value: ExchangeKey): Sql {
    return trusted(quoteString(checkedString('exchange key', EXCHANGE_KEY_PATTERN, value)));
  },
  side(value: Side): Sql {
    if (!(SIDES as readonly unknown[]).includes(value)) throw new LiteralError('not a side');
    return trusted(quoteString(value));
  },
  /** A ticker or a ticker prefix: letters, digits, `.`, `_`, `-`; 1–128 characters. */
  ticker(value: string): Sql {
    return trusted(quoteString(checkedString('ticker', TICKER_PATTERN, value)));
  },
  /** Any short token in the ticker grammar that is not a ticker (a checksum, a slug, a gap reason). */
  token(value: string): Sql {
    return trusted(quoteString(checkedString('token', TICKER_PATTERN, value)));
  },
  /** A database/table/column name as a string value (e.g. to look it up in system.columns). */
  name(value: string): Sql {
    return trusted(quoteString(checkedString('name', IDENTIFIER_PATTERN, value)));
  },
  /** A database/table/column name, back-quoted. */
  identifier(value: string): Sql {
    return trusted(`\`${checkedString('identifier', IDENTIFIER_PATTERN, value)}\``);
  },
  /**
   * A table or column name as written in our DDL, unquoted (`ticker`, `snapshots`): the identifier grammar is a
   * plain word. Migration 1 was written that way, and its text is part of its checksum.
   */
  bare(value: string): Sql {
    return trusted(checkedString('identifier', IDENTIFIER_PATTERN, value));
  },
  /** A cluster name as a string literal (`ON CLUSTER 'name'`, the Distributed engine's first argument). */
  cluster(value: string): Sql {
    return trusted(quoteString(checkedString('cluster name', CLUSTER_PATTERN, value)));
  },
  /** A ZooKeeper path as a string literal (a replicated engine's first argument). */
  zooKeeperPath(value: string): Sql {
    return trusted(quoteString(checkedString('ZooKeeper path', ZOOKEEPER_PATH_PATTERN, value)));
  },
  /** A server's `host:port` as a string literal (the `remote()` table function's first argument). */
  address(value: string): Sql {
    return trusted(quoteString(checkedString('address', /^[A-Za-z0-9.-]{1,253}:[0-9]{1,5}$/, value)));
  },
  /** A replica name as a string literal (a replicated engine's second argument). */
  replicaName(value: string): Sql {
    return trusted(quoteString(checkedString('replica name', REPLICA_NAME_PATTERN, value)));
  },
  /** An `Enum8(...)` type from names (identifier grammar) and codes in [-128, 127]. */
  enum8(codes: Readonly<Record<string, number>>): Sql {
    const entries = Object.entries(codes);
    if (entries.length === 0) throw new LiteralError('an Enum8 needs members');
    const parts = entries.map(([name, code]) => {
      checkedString('enum member', IDENTIFIER_PATTERN, name);
      if (!Number.isInteger(code) || code < -128 || code > 127) throw new LiteralError(`bad Enum8 code ${code}`);
      return `${quoteString(name)} = ${code}`;
    });
    return trusted(`Enum8(${parts.join(', ')})`);
  },
  /** Venue text as the inserts accept it (a trade id, a venue's side: printable ASCII, no tab or backslash). */
  text(value: string): Sql {
    return trusted(quoteString(checkedString('venue text', VENUE_TEXT_PATTERN, value)));
  },
  queryId(value: string): Sql {
    return trusted(quoteString(checkedString('query id', QUERY_ID_PATTERN, value)));
  },
  /** A `LIKE` pattern for the query ids that start with `prefix` (letters, digits, `-`: no LIKE wildcard in it). */
  queryIdPrefix(prefix: string): Sql {
    return trusted(quoteString(`${checkedString('query id prefix', /^[A-Za-z0-9-]{1,64}$/, prefix)}%`));
  },
};

/** Joins fragments with a separator made of code (not data). */
export function join(parts: readonly Sql[], separator: string): Sql {
  for (const p of parts) if (!(p instanceof Sql)) throw new LiteralError('join() takes Sql fragments only');
  return trusted(parts.map((p) => p.text).join(separator));
}

/**
 * Template tag for SQL: the literal parts are code written here; every interpolated value must be an `Sql`
 * fragment (from `lit`, `join` or another `sql`). Anything else throws.
 */
export function sql(strings: TemplateStringsArray, ...values: Sql[]): Sql {
  let text = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) {
    const v: unknown = values[i];
    if (!(v instanceof Sql)) {
      throw new LiteralError(`sql\`\`: interpolated value ${i} is not an Sql fragment (use lit.*)`);
    }
    text += v.text + (strings[i + 1] ?? '');
  }
  return trusted(text);
}
