import { BAR_LAYOUT } from '@depthgate/history-store';
import { int128Bytes, int64 } from '../testing/row-binary';
import { barsJson, divideRounded, vwapOf } from './bars';
import { CorruptStreamError } from './row-binary';

const E18 = 10n ** 18n;

describe('bars', () => {
  it('rounds the VWAP to the nearest 1e-18, halves away from zero', () => {
    expect(divideRounded(7n, 2n)).toBe(4n);
    expect(divideRounded(5n, 4n)).toBe(1n);
    expect(divideRounded(6n, 4n)).toBe(2n);
    expect(divideRounded(-7n, 2n)).toBe(-4n);
    expect(divideRounded(1n, 3n)).toBe(0n);
    expect(divideRounded(2n, 3n)).toBe(1n);
  });

  it('adds the notional’s three parts at their scales (18, 27, 36) before dividing by the volume', () => {
    // Trades 0.1234567891 × 3 and 2 × 0.0000000005: notional 0.3703703673 + 0.000000001 = 0.3703703683,
    // volume 3.0000000005.
    const hi = 123456789n * 3n * 10n ** 9n + 2n * 0n; // hi(p)·hi(s), scale 18: 0.123456789 × 3
    const mid = 1n * 10n ** 17n * 3n + 2n * 5n * 10n ** 17n; // scale 27: lo(0.1234567891)·3 + 2·lo(0.0000000005)
    const exact = (1234567891n * 3n * 10n ** 26n + 2n * 5n * 10n ** 26n) / 10n ** 0n; // scale 36
    expect(hi * 10n ** 18n + mid * 10n ** 9n).toBe(exact);
    const volume = 3n * E18 + 5n * 10n ** 8n;
    expect(vwapOf(hi, mid, 0n, volume)).toBe(divideRounded(exact, volume));
    expect(() => vwapOf(1n, 0n, 0n, 0n)).toThrow(CorruptStreamError);
  });

  it('writes a bar in canonical text; refuses bytes that are not bars', () => {
    const bar = (ts: number, trades: bigint) =>
      Buffer.concat([
        int64(BigInt(ts)),
        ...[48n, 51n, 47n, 50n].map((c) => int128Bytes(c * 10n ** 16n)),
        int128Bytes(12n * E18 + 5n * 10n ** 17n),
        Buffer.from(new BigUint64Array([trades]).buffer),
        int128Bytes(6n * E18),
        int128Bytes(0n),
        int128Bytes(0n),
      ]);
    const one = bar(Date.UTC(2026, 2, 26, 14, 1), 3n);
    expect(one.length).toBe(BAR_LAYOUT.size);
    expect(
      barsJson(one, 60_000)
        .text.toString('latin1')
        .split(/,(?=\{)/),
    ).toEqual([
      '{"ts":"2026-03-26T14:01:00.000Z","open":"0.48","high":"0.51","low":"0.47","close":"0.5","volume":"12.5","vwap":"0.48","trades":3}',
    ]);
    const two = barsJson(Buffer.concat([one, bar(Date.UTC(2026, 2, 26, 14, 2), 1n)]), 60_000);
    expect(JSON.parse(`[${two.text.toString('latin1')}]`)).toHaveLength(2);
    expect(two.text.toString('latin1', 0, two.ends[0])).toBe(barsJson(one, 60_000).text.toString('latin1'));
    expect(two.starts).toEqual([Date.UTC(2026, 2, 26, 14, 1), Date.UTC(2026, 2, 26, 14, 2)]);
    expect(() => barsJson(bar(60_001, 1n), 60_000)).toThrow(CorruptStreamError);
    // All trades at one price: the VWAP is that price (the notional's parts are not read: zeros here).
    const flat = Buffer.concat([
      int64(BigInt(Date.UTC(2026, 2, 26, 14, 3))),
      ...[5n, 5n, 5n, 5n].map((c) => int128Bytes(c * 10n ** 17n + 1n)),
      int128Bytes(7n * E18),
      Buffer.from(new BigUint64Array([4n]).buffer),
      int128Bytes(0n),
      int128Bytes(0n),
      int128Bytes(0n),
    ]);
    expect(JSON.parse(barsJson(flat, 60_000).text.toString('latin1'))).toMatchObject({
      high: '0.500000000000000001',
      vwap: '0.500000000000000001',
      trades: 4,
    });
    const noVolume = Buffer.from(flat);
    noVolume.fill(0, BAR_LAYOUT.volume, BAR_LAYOUT.volume + 16);
    expect(() => barsJson(noVolume, 60_000)).toThrow(CorruptStreamError);
    expect(() => barsJson(bar(60_000, 0n), 60_000)).toThrow(CorruptStreamError);
    expect(() => barsJson(one.subarray(1), 60_000)).toThrow(CorruptStreamError);
  });
});
