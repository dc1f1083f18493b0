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
import { bytes, copy, CorruptStreamError, writeDecimal18, writeTimestamp } from './row-binary';

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
const E18 = 10n ** 18n;
const E9 = 10n ** 9n;

export function vwapOf(hi: bigint, mid: bigint, lo: bigint, volume: bigint): bigint {
  const notional = hi * E18 + mid * E9 + lo;
  if (volume === 0n) throw new CorruptStreamError('a bar with no volume: trades are stored with positive sizes');
  return divideRounded(notional, volume);
}

const B_TS = bytes('{"ts":"');
const B_OPEN = bytes('","open":"');
const B_HIGH = bytes('","high":"');
const B_LOW = bytes('","low":"');
const B_CLOSE = bytes('","close":"');
const B_VOLUME = bytes('","volume":"');
const B_VWAP = bytes('","vwap":"');
const B_TRADES = bytes('","trades":');
const B_END = bytes('}');

/**
 * A bar's JSON `{"ts","open","high","low","close","volume","vwap","trades"}` into `out` from 0 (its length returned):
 * the prices and the volume straight from the row's Decimal128s at `src[o]` (BAR_LAYOUT), the VWAP from `vwap[0]`.
 */
function writeBarText(src: Buffer, o: number, ts: number, vwap: Buffer, trades: bigint, out: Buffer): number {
  let p = copy(B_TS, out, 0);
  p = writeTimestamp(ts, out, p);
  p = copy(B_OPEN, out, p);
  p = writeDecimal18(src, o + BAR_LAYOUT.open, out, p);
  p = copy(B_HIGH, out, p);
  p = writeDecimal18(src, o + BAR_LAYOUT.high, out, p);
  p = copy(B_LOW, out, p);
  p = writeDecimal18(src, o + BAR_LAYOUT.low, out, p);
  p = copy(B_CLOSE, out, p);
  p = writeDecimal18(src, o + BAR_LAYOUT.close, out, p);
  p = copy(B_VOLUME, out, p);
  p = writeDecimal18(src, o + BAR_LAYOUT.volume, out, p);
  p = copy(B_VWAP, out, p);
  p = writeDecimal18(vwap, 0, out, p);
  p = copy(B_TRADES, out, p);
  p += out.write(String(trades), p, 'latin1');
  return copy(B_END, out, p);
}

/** A bar's JSON text at most (its fixed text, a timestamp, six decimals and a count). */
const MAX_BAR_TEXT = 256;

/**
 * The bars of a query's output, each as its JSON object; `intervalMs` checks their starts. Each is written into one
 * scratch buffer straight from its RowBinary decimals (only the VWAP goes through BigInt), then taken as one string.
 */
export function barsJson(raw: Buffer, intervalMs: number): { rows: string[]; starts: number[] } {
  const size = BAR_LAYOUT.size;
  if (raw.length % size !== 0) throw new CorruptStreamError('the bars ended in the middle of a row');
  const rows: string[] = [];
  const starts: number[] = [];
  const out = Buffer.allocUnsafe(MAX_BAR_TEXT);
  const vwap = Buffer.allocUnsafe(16);
  for (let o = 0; o < raw.length; o += size) {
    const ts = Number(raw.readBigInt64LE(o + BAR_LAYOUT.ts));
    const trades = raw.readBigUInt64LE(o + BAR_LAYOUT.trades);
    if (ts < 0 || ts > MAX_TS || ts % intervalMs !== 0 || trades < 1n) {
      throw new CorruptStreamError(`unexpected data in the bars: ${raw.toString('latin1', o, o + 80)}`);
    }
    const v = vwapOf(
      int128(raw, o + BAR_LAYOUT.notionalHi),
      int128(raw, o + BAR_LAYOUT.notionalMid),
      int128(raw, o + BAR_LAYOUT.notionalLo),
      int128(raw, o + BAR_LAYOUT.volume),
    );
    const u = BigInt.asUintN(128, v);
    vwap.writeBigUInt64LE(u & 0xffff_ffff_ffff_ffffn, 0);
    vwap.writeBigUInt64LE(u >> 64n, 8);
    rows.push(out.toString('latin1', 0, writeBarText(raw, o, ts, vwap, trades, out)));
    starts.push(ts);
  }
  return { rows, starts };
}
