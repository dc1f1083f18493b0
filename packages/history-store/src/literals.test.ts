import { EXCHANGES, EXCHANGE_KEYS } from '@depthgate/platforms';
import { Rng } from '@depthgate/service-kit';
import { LiteralError, Sql, TICKER_PATTERN, join, lit, quoteString, sql } from './literals';
import { storedExchanges } from './migrations';

/** Reads a literal produced by quoteString back, following ClickHouse's escape rules. */
function unquote(literal: string): string {
  expect(literal.startsWith("'") && literal.endsWith("'")).toBe(true);
  const body = literal.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c === "'") throw new Error(`unescaped quote at ${i} in ${literal}`);
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = body[++i];
    if (next === 'x') {
      out += String.fromCharCode(parseInt(body.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (next === '\\' || next === "'") {
      out += next;
    } else {
      throw new Error(`unexpected escape \\${next}`);
    }
  }
  return out;
}

const HOSTILE = [
  "'",
  "\\'",
  "'; DROP TABLE snapshots; --",
  "x' OR '1'='1",
  '\\',
  '\\\\',
  '\0',
  'a\0b',
  '%',
  '_',
  'KX%',
  'KX_',
  '\n',
  '\r\n',
  '\t',
  '`',
  '"',
  '${db}',
  '/* */',
  'é',
  '🙂',
  '\u2028',
  '\u202e',
  'x'.repeat(65),
  'x'.repeat(10_000),
  '',
  ' ',
  'KX BTC',
  'KX-BTC\n',
  '..',
  '-',
];

/** Random strings biased towards the characters that break SQL. */
function hostileString(rng: Rng): string {
  const alphabet = [
    "'",
    '\\',
    '"',
    '`',
    '%',
    '_',
    '\0',
    '\n',
    '\t',
    ';',
    '-',
    '.',
    'A',
    'z',
    '9',
    ' ',
    'é',
    '🙂',
    '\u0001',
    '\u007f',
    '{',
    '}',
    '$',
  ];
  const n = rng.range(0, rng.chance(0.1) ? 200 : 20);
  let s = '';
  for (let i = 0; i < n; i++) {
    s += rng.chance(0.2) ? String.fromCodePoint(rng.range(0, 0x2ffff)) : rng.pick(alphabet);
  }
  return s;
}

describe('quoteString', () => {
  it('round-trips hostile strings: no unescaped quote, every character back', () => {
    for (const s of HOSTILE) expect(unquote(quoteString(s))).toBe(s);
  });

  it('round-trips 20,000 random hostile strings', () => {
    const rng = new Rng('fuzz-quote');
    for (let i = 0; i < 20_000; i++) {
      const s = hostileString(rng);
      const q = quoteString(s);
      expect([...q].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)).toBe(false);
      if (unquote(q) !== s) throw new Error(`round trip failed for ${JSON.stringify(s)}`);
    }
  });
});

describe('lit', () => {
  it('accepts a ticker exactly when it matches the grammar, and quotes it plainly', () => {
    const rng = new Rng('fuzz-ticker');
    const candidates = [
      ...HOSTILE,
      'KXBTCD-26MAR07-T100000',
      'BTCUSD',
      'GEMI-FEDJAN26-DN25',
      'a.b_c-d',
      'x'.repeat(64),
      'x'.repeat(128),
      'x'.repeat(129),
      '7'.repeat(77),
    ];
    for (let i = 0; i < 20_000; i++) candidates.push(hostileString(rng));
    for (const s of candidates) {
      if (TICKER_PATTERN.test(s)) {
        const text = lit.ticker(s).text;
        expect(text).toBe(`'${s}'`);
        expect(lit.token(s).text).toBe(`'${s}'`);
      } else {
        expect(() => lit.ticker(s)).toThrow(LiteralError);
        expect(() => lit.token(s)).toThrow(LiteralError);
      }
    }
  });

  it('rejects anything that is not a string where a ticker is expected', () => {
    for (const v of [undefined, null, 1, {}, ['KX'], { toString: () => 'KX' }]) {
      expect(() => lit.ticker(v as unknown as string)).toThrow(LiteralError);
    }
  });

  it('renders safe integers and 64-bit bigints only', () => {
    expect(lit.int(0).text).toBe('0');
    expect(lit.int(-1772841600000).text).toBe('-1772841600000');
    expect(lit.int(2n ** 64n - 1n).text).toBe('18446744073709551615');
    expect(lit.int(-(2n ** 63n)).text).toBe('-9223372036854775808');
    for (const bad of [1.5, NaN, Infinity, -Infinity, 2 ** 53, 2n ** 64n, -(2n ** 63n) - 1n]) {
      expect(() => lit.int(bad)).toThrow(LiteralError);
    }
    expect(() => lit.int('1' as unknown as number)).toThrow(LiteralError);
    expect(() => lit.int('1; DROP' as unknown as number)).toThrow(LiteralError);
  });

  it('accepts exchange keys by their grammar and sides by their members', () => {
    for (const e of EXCHANGE_KEYS) expect(lit.exchange(e).text).toBe(`'${e}'`);
    expect(lit.side('bid').text).toBe("'bid'");
    for (const bad of ["venue_b'", 'VENUE_B', '', 'bid ', 'venue-b', '1venue']) {
      expect(() => lit.exchange(bad as never)).toThrow(LiteralError);
      expect(() => lit.side(bad as never)).toThrow(LiteralError);
    }
    expect(() => lit.side('kalshi' as never)).toThrow(LiteralError);
  });

  it('quotes identifiers, names and query ids from their grammars only', () => {
    expect(lit.identifier('depthgate').text).toBe('`depthgate`');
    expect(lit.name('depthgate').text).toBe("'depthgate'");
    expect(lit.queryId('dg-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0').text).toBe(
      "'dg-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0'",
    );
    for (const bad of ['', '1db', 'a-b', 'a`b', 'a b', 'x'.repeat(64), 'db;']) {
      expect(() => lit.identifier(bad)).toThrow(LiteralError);
    }
    for (const bad of ['', "id'", 'a b', 'x'.repeat(101)]) expect(() => lit.queryId(bad)).toThrow(LiteralError);
  });

  it('builds Enum8 types from names and codes', () => {
    expect(lit.enum8({ bid: 1, ask: 2 }).text).toBe("Enum8('bid' = 1, 'ask' = 2)");
    expect(() => lit.enum8({ "x'": 1 })).toThrow(LiteralError);
    expect(() => lit.enum8({ x: 200 })).toThrow(LiteralError);
    expect(() => lit.enum8({})).toThrow(LiteralError);
  });
});

describe('sql``', () => {
  it('interpolates Sql fragments and nothing else', () => {
    const q = sql`SELECT ${lit.int(1)} WHERE t = ${lit.ticker('KX')}`;
    expect(q.text).toBe("SELECT 1 WHERE t = 'KX'");
    expect(() => sql`SELECT ${"'; DROP TABLE x" as unknown as Sql}`).toThrow(LiteralError);
    expect(() => sql`SELECT ${1 as unknown as Sql}`).toThrow(LiteralError);
    expect(() => sql`SELECT ${{ text: 'x' } as unknown as Sql}`).toThrow(LiteralError);
    expect(() => join(['x' as unknown as Sql], ',')).toThrow(LiteralError);
  });

  it('cannot be forged from outside the module', () => {
    expect(() => new Sql(Symbol('sql'), "1'; DROP")).toThrow(LiteralError);
  });

  it('stores every recorded exchange under its code: each has its migration line', () => {
    expect(storedExchanges()).toEqual(EXCHANGES.codes);
  });
});
