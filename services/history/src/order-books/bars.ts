/**
 * OHLCV bars as the bars endpoint writes them, from the RowBinary rows of the store's bars query (BAR_LAYOUT): the
 * prices and the volume in canonical decimal text from their 128-bit integers (text.ts), the VWAP computed here,
 * exactly, from the notional's three parts (docs/history.md, "Bars") — or, for a bar whose trades were all at one price,
 * that price:
 *
 *   notional (scale 36) = notional_hi · 10^18 + notional_mid · 10^9 + notional_lo
 *   vwap (scale 18)     = notional / volume, rounded to the nearest 10^-18, halves away from zero
 *
 * A page holds at most MAX_LIMIT bars: one string per bar is fine here (the rows endpoints' hot path is row-binary/).
 */
import { BAR_LAYOUT } from '@depthgate/history-store';
import { bytes, copy, CorruptStreamError, int128, writeDecimal18, writeTimestamp } from './row-binary';

const MAX_TS = 253_402_300_799_999;

/** Whether the Int128 at `src[o]` is 0. */
const isZero128 = (src: Buffer, o: number): boolean =>
  (src.readUInt32LE(o) | src.readUInt32LE(o + 4) | src.readUInt32LE(o + 8) | src.readUInt32LE(o + 12)) === 0;

const TWO_32 = 4_294_967_296;
const TWO_64 = 1n << 64n;

/** An Int64 (or a UInt64 below 2^63) at `src[o]` as a number: exact below 2^53, which starts and counts are. */
const int64 = (src: Buffer, o: number): number => src.readInt32LE(o + 4) * TWO_32 + src.readUInt32LE(o);

/** `v` as a little-endian Int128 at `out[0]`. */
function writeInt128(v: bigint, out: Buffer): void {
  if (v >= 0n && v < TWO_64) {
    out.writeBigUInt64LE(v, 0);
    out.writeUInt32LE(0, 8);
    out.writeUInt32LE(0, 12);
    return;
  }
  const u = BigInt.asUintN(128, v);
  out.writeBigUInt64LE(u & 0xffff_ffff_ffff_ffffn, 0);
  out.writeBigUInt64LE(u >> 64n, 8);
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
 * A bar's JSON `{"ts","open","high","low","close","volume","vwap","trades"}` into `out` at `p` (where it ends returned):
 * the prices and the volume straight from the row's Decimal128s at `src[o]` (BAR_LAYOUT), the VWAP from `vwap[vwapAt]`.
 */
function writeBarText(
  src: Buffer,
  o: number,
  ts: number,
  vwap: Buffer,
  vwapAt: number,
  trades: number,
  out: Buffer,
  p: number,
): number {
  p = copy(B_TS, out, p);
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
  p = writeDecimal18(vwap, vwapAt, out, p);
  p = copy(B_TRADES, out, p);
  p += out.write(String(trades), p, 'latin1');
  return copy(B_END, out, p);
}

/** A bar's JSON text at most (its fixed text, a timestamp, six decimals, a count and the comma before it). */
const MAX_BAR_TEXT = 256;

/** The bars of one query: their JSON objects one after the other (comma-separated), where each ends, its start. */
export interface BarsText {
  text: Buffer;
  /** `ends[i]`: the end of bar i's object in `text` (the next begins one byte on, after its comma). */
  ends: number[];
  starts: number[];
}

/**
 * The bars of a query's output as their JSON objects, comma-separated; `intervalMs` checks their starts. `after`:
 * bars went before these in the body, so the first has its comma too (the window's text follows the last one's as it
 * is). Written into one buffer straight from the RowBinary decimals (only the VWAP goes through BigInt): no string
 * per bar.
 */
export function barsJson(raw: Buffer, intervalMs: number, after = false): BarsText {
  const size = BAR_LAYOUT.size;
  if (raw.length % size !== 0) throw new CorruptStreamError('the bars ended in the middle of a row');
  const ends: number[] = [];
  const starts: number[] = [];
  const out = Buffer.allocUnsafe((raw.length / size) * MAX_BAR_TEXT);
  const vwap = Buffer.allocUnsafe(16);
  let p = 0;
  for (let o = 0; o < raw.length; o += size) {
    const ts = int64(raw, o + BAR_LAYOUT.ts);
    const trades = int64(raw, o + BAR_LAYOUT.trades);
    if (ts < 0 || ts > MAX_TS || ts % intervalMs !== 0 || trades < 1 || !Number.isSafeInteger(trades)) {
      throw new CorruptStreamError(`unexpected data in the bars: ${raw.toString('latin1', o, o + 80)}`);
    }
    // All of a bar's trades at one price (high = low; one trade, most bars of a quiet market): its VWAP is that price,
    // exactly, with no BigInt. Otherwise the division of the notional by the volume.
    const flat =
      raw.compare(raw, o + BAR_LAYOUT.low, o + BAR_LAYOUT.low + 16, o + BAR_LAYOUT.high, o + BAR_LAYOUT.high + 16) ===
      0;
    if (flat) {
      if (isZero128(raw, o + BAR_LAYOUT.volume))
        throw new CorruptStreamError('a bar with no volume: trades are stored with positive sizes');
    } else
      writeInt128(
        vwapOf(
          int128(raw, o + BAR_LAYOUT.notionalHi),
          int128(raw, o + BAR_LAYOUT.notionalMid),
          int128(raw, o + BAR_LAYOUT.notionalLo),
          int128(raw, o + BAR_LAYOUT.volume),
        ),
        vwap,
      );
    if (p > 0 || after) out[p++] = 0x2c;
    p = flat
      ? writeBarText(raw, o, ts, raw, o + BAR_LAYOUT.low, trades, out, p)
      : writeBarText(raw, o, ts, vwap, 0, trades, out, p);
    ends.push(p);
    starts.push(ts);
  }
  return { text: out.subarray(0, p), ends, starts };
}
