/**
 * RowBinary rows as ClickHouse sends them, built from their values for the row renderer's tests (src/testing/: not
 * part of the build): the window queries' delta and snapshot layouts, little-endian, decimals as Decimal(38,18).
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
