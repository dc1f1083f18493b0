/**
 * The checksum's known answers, shared with the Python client (clients/python/tests/test_checksum.py checks the
 * same file): both clients must give exactly these texts and checksums for these books, through the checksum
 * function and through a book built from the levels.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { bookChecksum, checksumText, crc32 } from './checksum';
import { OrderBook } from './order-book';
import type { SnapshotRow } from './rows';

interface Case {
  name: string;
  bids: [string, string][];
  asks: [string, string][];
  depth: number | null;
  text: string;
  checksum: number;
  book: boolean;
}

const { cases } = JSON.parse(readFileSync(path.join(__dirname, 'checksum-cases.json'), 'utf8')) as { cases: Case[] };
const levels = (list: [string, string][]) => list.map(([price, quantity]) => ({ price, quantity }));

describe('the checksum’s shared known answers (checksum-cases.json)', () => {
  it('holds the documented example, an empty book, depth cuts, non-canonical text and random books', () => {
    expect(cases.length).toBeGreaterThan(30);
    expect(cases[0]).toMatchObject({ text: '0.48:150:0.5:20.25:0.47:100', checksum: 1986237867 });
    expect(cases.filter((c) => c.name.startsWith('random')).length).toBeGreaterThanOrEqual(20);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_, c) => {
    const depth = c.depth ?? undefined;
    expect(checksumText(levels(c.bids), levels(c.asks), depth)).toBe(c.text);
    expect(bookChecksum(levels(c.bids), levels(c.asks), depth)).toBe(c.checksum);
    // The expected value is zlib's CRC-32 of the text, and so is ours.
    expect(zlibCrc32(c.text)).toBe(c.checksum);
    expect(crc32(c.text)).toBe(c.checksum);
    if (c.book) {
      const ts = '2026-03-26T14:00:01.193Z';
      const rows: SnapshotRow[] = [
        ...c.bids.map(([price, quantity]) => ({ ts, side: 'bid' as const, price, quantity })),
        ...c.asks.map(([price, quantity]) => ({ ts, side: 'ask' as const, price, quantity })),
      ];
      expect(OrderBook.fromSnapshot(rows).checksum(depth)).toBe(c.checksum);
    }
  });
});
