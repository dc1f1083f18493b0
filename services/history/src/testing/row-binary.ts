/**
 * RowBinary rows as ClickHouse sends them, built from their values for the row renderer's tests (src/testing/: not
 * part of the build): the window queries' delta, snapshot, trade and interleaved layouts, little-endian, decimals as
 * Decimal(38,18).
 */
import type { Rng } from '@depthgate/service-kit';

/** Reference: a Decimal(38, 18) from its decimal text, as ClickHouse sends it (16 bytes, little-endian). */
export function decimalBytes(text: string): Buffer {
  const m = /^(-?)(\d+)(?:\.(\d{1,18}))?$/.exec(text);
  if (!m) throw new Error(`bad decimal ${text}`);
  let v = BigInt(m[2] as string) * 10n ** 18n + BigInt((m[3] ?? '').padEnd(18, '0'));
  if (m[1]) v = -v;
  return int128Bytes(v);
}

export function int128Bytes(v: bigint): Buffer {
  let x = BigInt.asUintN(128, v);
  const b = Buffer.alloc(16);
  for (let i = 0; i < 16; i++) {
    b[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return b;
}

export function int64(v: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64LE(v);
  return b;
}

const SIDE = { bid: 1, ask: 2 } as const;

export interface Delta {
  ts: number;
  sequence: number | bigint;
  side: 'bid' | 'ask';
  price: string;
  quantity_delta: string;
}
export interface Snapshot {
  ts: number;
  side: 'bid' | 'ask';
  price: string;
  quantity: string;
}

export const deltaRow = (r: Delta) =>
  Buffer.concat([
    int64(BigInt(r.ts)),
    int64(BigInt.asIntN(64, BigInt(r.sequence))),
    Buffer.from([SIDE[r.side]]),
    decimalBytes(r.price),
    decimalBytes(r.quantity_delta),
  ]);
export const snapshotRow = (r: Snapshot) =>
  Buffer.concat([int64(BigInt(r.ts)), Buffer.from([SIDE[r.side]]), decimalBytes(r.price), decimalBytes(r.quantity)]);

/** `all` cut into chunks of 1 to `max` bytes (copies), as a stream may deliver it. */
export function randomChunks(rng: Rng, all: Buffer, max: number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0; at < all.length;) {
    const n = rng.range(1, max);
    chunks.push(Buffer.from(all.subarray(at, at + n)));
    at += n;
  }
  return chunks;
}

export interface Trade {
  ts: number;
  sequence: number | bigint;
  trade_id: string;
  price: string;
  size: string;
  side: 'buy' | 'sell';
  received_ts?: number;
  venue_seq?: string;
  venue_side?: string;
}

/** A `venue_seq` as window reads take it: FixedString(48), the text zero-padded. */
export function venueSeqBytes(text: string): Buffer {
  const b = Buffer.alloc(48);
  b.write(text, 'latin1');
  return b;
}

const TRADE_SIDE = { buy: 1, sell: 2 } as const;

/** A String as RowBinary sends it: its length (ULEB128), its bytes. */
export function stringBytes(text: string): Buffer {
  const body = Buffer.from(text, 'latin1');
  const n = body.length;
  return Buffer.concat([Buffer.from(n < 0x80 ? [n] : [(n & 0x7f) | 0x80, n >> 7]), body]);
}

/**
 * A row of the trade layout: the fixed columns, `received_ts`, `venue_seq` and `venue_side` when the trade has them
 * (a read that asked for them), and the id.
 */
export const tradeRow = (r: Trade) =>
  Buffer.concat([
    int64(BigInt(r.ts)),
    int64(BigInt.asIntN(64, BigInt(r.sequence))),
    Buffer.from([TRADE_SIDE[r.side]]),
    decimalBytes(r.price),
    decimalBytes(r.size),
    ...(r.received_ts === undefined ? [] : [int64(BigInt(r.received_ts))]),
    ...(r.venue_seq === undefined ? [] : [venueSeqBytes(r.venue_seq)]),
    ...(r.venue_side === undefined ? [] : [stringBytes(r.venue_side)]),
    stringBytes(r.trade_id),
  ]);

/**
 * A row of the interleaved layout: a delta (row kind 1) or a trade (row kind 2), `received_ts` and `venue_seq` when
 * given.
 */
export function interleavedRow(
  r: ({ kind: 'delta' } & Delta) | ({ kind: 'trade' } & Trade),
  receivedTs?: number,
  venueSeq?: string,
) {
  const delta = r.kind === 'delta';
  return Buffer.concat([
    int64(BigInt(r.ts)),
    int64(BigInt.asIntN(64, BigInt(r.sequence))),
    Buffer.from([delta ? 1 : 2, delta ? SIDE[r.side] : TRADE_SIDE[r.side]]),
    decimalBytes(r.price),
    decimalBytes(delta ? r.quantity_delta : r.size),
    ...(receivedTs === undefined ? [] : [int64(BigInt(receivedTs))]),
    ...(venueSeq === undefined ? [] : [venueSeqBytes(venueSeq)]),
    stringBytes(delta ? '' : r.trade_id),
  ]);
}
