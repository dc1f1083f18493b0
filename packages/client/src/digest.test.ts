import { DIGEST_MODULUS, digestText, levelWeight, murmur3 } from './digest';
import { OrderBook } from './order-book';
import type { DeltaRow, SnapshotRow } from './rows';

describe('the book digest (digest.ts)', () => {
  it('MurmurHash3 x86_32 gives the published values', () => {
    expect(murmur3('', 0)).toBe(0);
    expect(murmur3('', 1)).toBe(0x514e28b7);
    expect(murmur3('hello', 0)).toBe(0x248bfa47);
    expect(murmur3('Hello, world!', 1234)).toBe(0xfaf6cdb3);
    expect(murmur3('The quick brown fox jumps over the lazy dog', 0)).toBe(0x2e4ff723);
    // Of the UTF-8 bytes (c3 a9), not of the UTF-16 code unit: the value of a byte-wise implementation (Python's).
    expect(murmur3('é', 0)).toBe(269551495);
  });

  it('the module comment’s example: weight and digest', () => {
    expect(murmur3('bid:0.48', 0)).toBe(834796200);
    expect(murmur3('bid:0.48', 1)).toBe(304640021);
    expect(levelWeight('bid', '0.48')).toBe(1750694520571150n);
    const book = OrderBook.fromSnapshot([
      { ts: '2026-11-15T00:00:00.000Z', side: 'bid', price: '0.48', quantity: '150' },
    ]);
    expect(book.digest()).toBe('1894132580178927783');
    expect(new OrderBook().digest()).toBe('0');
  });

  it('weights differ by side and by price, and stay below 2^53', () => {
    const seen = new Set<bigint>();
    for (const side of ['bid', 'ask']) {
      for (let i = 1; i <= 2000; i++) {
        const w = levelWeight(side, (i / 1000).toString());
        expect(w > 0n && w < 2n ** 53n).toBe(true);
        seen.add(w);
      }
    }
    expect(seen.size).toBe(4000);
  });

  it('digestText reduces any integer into [0, 2^61 − 1)', () => {
    expect(digestText(DIGEST_MODULUS)).toBe('0');
    expect(digestText(-1n)).toBe(String(DIGEST_MODULUS - 1n));
    expect(digestText(DIGEST_MODULUS * 5n + 7n)).toBe('7');
  });

  it('kept delta by delta, the digest equals the digest of the same book loaded whole (random books and deltas)', () => {
    let seed = 42;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const ts = (ms: number) => new Date(Date.UTC(2026, 10, 15) + ms).toISOString();
    for (let round = 0; round < 50; round++) {
      const levels = new Map<string, bigint>(); // `${side} ${price}` → units of 10^-18
      const snapshot: SnapshotRow[] = [];
      for (let i = 0; i < 10; i++) {
        const side = i % 2 ? 'ask' : 'bid';
        const price = side === 'bid' ? `0.${10 + i}` : `0.${60 + i}`;
        const q = BigInt(1 + Math.floor(random() * 1e6)) * 10n ** 12n;
        levels.set(`${side} ${price}`, q);
        snapshot.push({ ts: ts(0), side, price, quantity: format(q) });
      }
      const book = OrderBook.fromSnapshot(snapshot);
      // Asked for once: from here on the book keeps it delta by delta (the loaded book's is summed afresh).
      const before = book.digest();
      expect(before).toBe(OrderBook.fromSnapshot(snapshot).digest());
      let sequence = 0;
      for (let i = 0; i < 200; i++) {
        const side = random() < 0.5 ? 'bid' : 'ask';
        const price = side === 'bid' ? `0.${10 + Math.floor(random() * 40)}` : `0.${60 + Math.floor(random() * 39)}`;
        const key = `${side} ${price}`;
        const held = levels.get(key) ?? 0n;
        // Remove the level, or change it by a random amount that keeps it ≥ 0 (18 decimals, so the last place counts).
        const change =
          random() < 0.2
            ? -held
            : BigInt(Math.floor(random() * 1e9)) * 10n ** 9n + 1n - (random() < 0.5 ? held / 2n : 0n);
        if (held + change < 0n || change === 0n) continue;
        const delta: DeltaRow = { ts: ts(1 + i), sequence: ++sequence, side, price, quantity_delta: format(change) };
        book.applyAt(delta, Date.parse(delta.ts));
        if (held + change === 0n) levels.delete(key);
        else levels.set(key, held + change);
      }
      book.settle();
      const rows: SnapshotRow[] = [...levels].map(([key, q]) => {
        const [side, price] = key.split(' ') as ['bid' | 'ask', string];
        return { ts: ts(1000), side, price, quantity: format(q) };
      });
      expect(book.digest()).toBe(OrderBook.fromSnapshot(rows).digest());
      expect(book.digest()).not.toBe(before);
      expect(book.clone().digest()).toBe(book.digest());
      // One unit of 10^-18 more anywhere is another digest.
      const [first] = rows as [SnapshotRow];
      const off = [{ ...first, quantity: format(units(first.quantity) + 1n) }, ...rows.slice(1)];
      expect(OrderBook.fromSnapshot(off).digest()).not.toBe(book.digest());
    }
  });
});

/** Units of 10^-18 as canonical decimal text. */
function format(units: bigint): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(19, '0');
  const whole = digits.slice(0, -18);
  const fraction = digits.slice(-18).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** Canonical decimal text as units of 10^-18. */
function units(text: string): bigint {
  const [whole = '0', fraction = ''] = text.split('.');
  return BigInt(whole) * 10n ** 18n + BigInt(fraction.padEnd(18, '0'));
}
