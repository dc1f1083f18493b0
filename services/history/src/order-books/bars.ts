/**
 * OHLCV bars as the bars endpoint writes them, from the RowBinary rows of the store's bars query (BAR_LAYOUT): the
 * prices and the volume in canonical decimal text from their 128-bit integers (text.ts), the VWAP computed here,
 * exactly, from the notional's three parts (docs/history.md, "Bars"):
 *
 *   notional (scale 36) = notional_hi · 10^18 + notional_mid · 10^9 + notional_lo
 *   vwap (scale 18)     = notional / volume, rounded to the nearest 10^-18, halves away from zero
 *
 * A page holds at most MAX_LIMIT bars: one string per bar is fine here (the rows endpoints' hot path is row-binary/).
 */
import { BAR_LAYOUT } from '@depthgate/history-store';
import { CorruptStreamError, decimalText, timestampText } from './row-binary';

const MAX_TS = 253_402_300_799_999;

/** A little-endian two's-complement Int128 at `src[o]`. */
function int128(src: Buffer, o: number): bigint {
  return BigInt.asIntN(128, (src.readBigUInt64LE(o + 8) << 64n) | src.readBigUInt64LE(o));
}

/** `n / d` rounded to the nearest integer, halves away from zero (d ≠ 0). */
export function divideRounded(n: bigint, d: bigint): bigint {
  const q = n / d;
  const r = n % d;
  const twice = 2n * (r < 0n ? -r : r);
  const abs = d < 0n ? -d : d;
  if (twice < abs) return q;
  return n < 0n !== d < 0n ? q - 1n : q + 1n;
}

/** The VWAP (scale 18) of a bar from its notional's three parts and its volume (each at its own scale). */
export function vwapOf(hi: bigint, mid: bigint, lo: bigint, volume: bigint): bigint {
  const notional = hi * 10n ** 18n + mid * 10n ** 9n + lo;
  if (volume === 0n) throw new CorruptStreamError('a bar with no volume: trades are stored with positive sizes');
  return divideRounded(notional, volume);
}

/** The bars of a query's output, each as its JSON object; `intervalMs` checks their starts. */
export function barsJson(raw: Buffer, intervalMs: number): { rows: string[]; starts: number[] } {
  const size = BAR_LAYOUT.size;
  if (raw.length % size !== 0) throw new CorruptStreamError('the bars ended in the middle of a row');
  const rows: string[] = [];
  const starts: number[] = [];
  for (let o = 0; o < raw.length; o += size) {
    const ts = Number(raw.readBigInt64LE(o + BAR_LAYOUT.ts));
    const trades = raw.readBigUInt64LE(o + BAR_LAYOUT.trades);
    if (ts < 0 || ts > MAX_TS || ts % intervalMs !== 0 || trades < 1n) {
      throw new CorruptStreamError(`unexpected data in the bars: ${raw.toString('latin1', o, o + 80)}`);
    }
    const d = (at: number) => decimalText(int128(raw, o + at));
    const volume = int128(raw, o + BAR_LAYOUT.volume);
    const vwap = vwapOf(
      int128(raw, o + BAR_LAYOUT.notionalHi),
      int128(raw, o + BAR_LAYOUT.notionalMid),
      int128(raw, o + BAR_LAYOUT.notionalLo),
      volume,
    );
    rows.push(
      `{"ts":"${timestampText(ts)}","open":"${d(BAR_LAYOUT.open)}","high":"${d(BAR_LAYOUT.high)}",` +
        `"low":"${d(BAR_LAYOUT.low)}","close":"${d(BAR_LAYOUT.close)}","volume":"${decimalText(volume)}",` +
        `"vwap":"${decimalText(vwap)}","trades":${trades}}`,
    );
    starts.push(ts);
  }
  return { rows, starts };
}
