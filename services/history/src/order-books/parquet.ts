/**
 * Parquet answers (`format=parquet` on the snapshots, deltas and trades bulk streams; docs/history.md, "Parquet"):
 * the rows of the NDJSON stream, with the same fields and types, as an Apache Parquet file written while the rows
 * come, one row group at a time — a stream's memory holds one row group, whatever its length.
 *
 * Columns, REQUIRED (never null), in the NDJSON row's field order:
 *
 *   ts, received_ts   INT64 TIMESTAMP(MILLIS, isAdjustedToUTC)   PLAIN or DELTA_BINARY_PACKED
 *   sequence          INT64 INTEGER(64, unsigned) (UINT_64)      PLAIN or DELTA_BINARY_PACKED
 *   price, quantity, quantity_delta, size
 *                     FIXED_LEN_BYTE_ARRAY(16) DECIMAL(38, 18)   dictionary when values repeat much, else PLAIN
 *   side, trade_id, venue_side, venue_seq
 *                     BYTE_ARRAY STRING                          dictionary, else PLAIN
 *
 * Each column chunk is one page (a dictionary page before it when there is one), ZSTD level 1. Decimals are exact:
 * the stored Decimal(38, 18) is the column's unscaled 128-bit integer, big-endian as Parquet wants it (readers give
 * pandas `decimal.Decimal`, DuckDB `DECIMAL(38,18)`).
 *
 * Which encoding, measured column by column on the benchmark's rows (1M deltas and snapshots of its busiest ticker,
 * SOLUSD; bytes a row after ZSTD; docs/benchmarks.md, issue 23):
 * - INT64: PLAIN keeps the repeats ZSTD finds (the rows of one message share a ts: 1.09 B against 1.19 delta-packed,
 *   whose miniblocks are as wide as their largest delta, zeros included), DELTA_BINARY_PACKED a constant step (a
 *   sequence counting one a row: 0.05 B against 1.02). So both are compressed and the smaller kept, on a stream's
 *   first row group and every TRIAL_EVERY-th (the groups between take the last winner).
 * - Decimals: a dictionary pays only when a value repeats in about DICTIONARY_SHARE rows: the snapshots' prices (0.49
 *   B against 0.77 PLAIN) and the deltas' (490 distinct in a row group: 1.15 B against 1.66), not the sizes (7.8 B
 *   PLAIN, 8.3 in a dictionary), nor BTCUSD's delta prices (22k distinct in a row group: 3.25 B against 2.84).
 *   Dictionary indexes wider than 4 bits are bit-packed or written in whole bytes (8 or 16 bits, which the RLE/
 *   bit-packed hybrid allows), tried as INT64's encodings are: in whole bytes ZSTD finds a snapshot's run of levels
 *   again in the next snapshot, which bit-packing at an odd width hides from it (0.49 B against 0.94), but indexes in
 *   no particular order compress better bit-packed (the deltas' prices: 1.18 B against 1.29).
 * - What is left is the values' own entropy at 18 places: a size with 8 decimals stored as its 128-bit unscaled
 *   integer (times 10^10) has 6–8 bytes of noise, and no standard encoding divides that out: DELTA_LENGTH_BYTE_ARRAY
 *   of minimal big-endian bytes (a BYTE_ARRAY decimal) saved 1.5–3 % on the deltas' sizes, lost on the snapshots' and
 *   trades'; DELTA_BYTE_ARRAY and BYTE_STREAM_SPLIT lost everywhere.
 *
 * What the NDJSON's gap markers and end line say goes into the file's footer (key-value metadata), the only place
 * Parquet has for it — the footer is written last, when the answer's end is known: `depthgate.count` (rows),
 * `depthgate.next_cursor` (absent when the answer is complete), `depthgate.gaps` (with include=gaps: the gaps the
 * answer covers, as the JSON page's `gaps` array), and `depthgate.exchange`, `depthgate.ticker`, `depthgate.endpoint`.
 * A file cut by a failure after the answer started has no footer, so no reader takes it for a complete one.
 *
 * Why not write it all with hyparquet-writer: its column encoder takes JavaScript values (a BigInt per decimal, an
 * array per column) and made 80,000 rows/s here, against about two million for the NDJSON stream; the rows are
 * already bytes. So the values go from the RowBinary rows into the row group's column buffers by copies, and the
 * pages are encoded here (PLAIN, RLE_DICTIONARY, DELTA_BINARY_PACKED: parquet-format's Encodings.md); the library
 * writes the Thrift structures — page headers and the footer — which are the part a hand-written encoder would get
 * wrong.
 */
import { constants as zlib, zstdCompressSync } from 'node:zlib';
import { ByteWriter } from 'hyparquet-writer';
import { writePageHeader } from 'hyparquet-writer/src/datapage.js';
import { writeMetadata } from 'hyparquet-writer/src/metadata.js';
import type { ColumnarSink } from './row-binary';
import {
  FIELD_RECEIVED,
  FIELD_SEQUENCE,
  FIELD_VENUE_SEQ,
  FIELD_VENUE_SIDE,
  VENUE_SEQ_BYTES,
  type SeriesKind,
} from './row-binary';
import { i32 } from './row-binary/text';

export const PARQUET_CONTENT_TYPE = 'application/vnd.apache.parquet';

/**
 * Rows per row group: a group's column buffers are 3.7 MB for deltas with received_ts. A row group is encoded at once
 * when it is full, while the rows after it wait: smaller groups keep that wait short (the answer's last group is
 * encoded after the last row came), at a cost in size below 1 % against groups twice as large.
 */
export const ROW_GROUP_ROWS = 65_536;

type FileMetaData = Parameters<typeof writeMetadata>[1];
type SchemaElement = FileMetaData['schema'][number];
type ColumnChunk = FileMetaData['row_groups'][number]['columns'][number];

/** How a column's values are taken from a row, and stored. */
/** (`padded`: a string in a zero-padded fixed-width field of the row, `venue_seq`.) */
type ColumnType = 'timestamp' | 'uint64' | 'decimal' | 'side' | 'string' | 'padded';

interface ColumnSpec {
  name: string;
  type: ColumnType;
  /** Fixed columns (and padded): the value's offset in the row (JSON layout). Strings: which String of the row (0, 1). */
  at: number;
  /** Sides: the names of codes 1 and 2. */
  names?: readonly [string, string];
}

const MAGIC = Buffer.from('PAR1', 'latin1');
const ZSTD_LEVEL = 1;
const TWO_32 = 4_294_967_296;
/** DELTA_BINARY_PACKED is used while every value of the group is below this (its arithmetic is in doubles). */
const DELTA_LIMIT = 2 ** 51;
/** Dictionaries hold at most this many values (their indexes at most 16 bits). */
const MAX_DICTIONARY = 65_536;

const BOOK_SIDES = ['bid', 'ask'] as const;
const TRADE_SIDES = ['buy', 'sell'] as const;

/**
 * The columns of a kind's rows, in the order of the NDJSON row's fields, and where each is in the RowBinary row of
 * the JSON layout (layouts.ts). Interleaved rows have no Parquet form (the route refuses the combination).
 */
export function parquetColumns(kind: SeriesKind, fields: number): ColumnSpec[] {
  const received = (fields & FIELD_RECEIVED) !== 0;
  /** received_ts and venue_seq after the row's own columns (which end at `end`), as asked for. */
  const extras = (end: number): ColumnSpec[] => [
    ...(received ? [{ name: 'received_ts', type: 'timestamp' as const, at: end }] : []),
    ...((fields & FIELD_VENUE_SEQ) !== 0
      ? [{ name: 'venue_seq', type: 'padded' as const, at: end + (received ? 8 : 0) }]
      : []),
  ];
  switch (kind) {
    case 'snapshot':
      return [
        { name: 'ts', type: 'timestamp', at: 0 },
        { name: 'side', type: 'side', at: 8, names: BOOK_SIDES },
        { name: 'price', type: 'decimal', at: 9 },
        { name: 'quantity', type: 'decimal', at: 25 },
        ...extras(41),
      ];
    case 'delta':
      return [
        { name: 'ts', type: 'timestamp', at: 0 },
        { name: 'sequence', type: 'uint64', at: 8 },
        { name: 'side', type: 'side', at: 16, names: BOOK_SIDES },
        { name: 'price', type: 'decimal', at: 17 },
        { name: 'quantity_delta', type: 'decimal', at: 33 },
        ...extras(49),
      ];
    case 'trade': {
      const venue = (fields & FIELD_VENUE_SIDE) !== 0;
      const [receivedTs, venueSeq] = [
        extras(49).filter((c) => c.name === 'received_ts'),
        extras(49).filter((c) => c.name === 'venue_seq'),
      ];
      return [
        { name: 'ts', type: 'timestamp', at: 0 },
        { name: 'trade_id', type: 'string', at: venue ? 1 : 0 },
        { name: 'price', type: 'decimal', at: 17 },
        { name: 'size', type: 'decimal', at: 33 },
        { name: 'side', type: 'side', at: 16, names: TRADE_SIDES },
        ...receivedTs,
        ...(venue ? [{ name: 'venue_side', type: 'string' as const, at: 0 }] : []),
        ...((fields & FIELD_SEQUENCE) !== 0 ? [{ name: 'sequence', type: 'uint64' as const, at: 8 }] : []),
        ...venueSeq,
      ];
    }
    case 'interleaved':
      throw new Error('interleaved rows have no Parquet form');
  }
}

function schemaElement(c: ColumnSpec): SchemaElement {
  const base = { name: c.name, repetition_type: 'REQUIRED' as const };
  switch (c.type) {
    case 'timestamp':
      return {
        ...base,
        type: 'INT64',
        converted_type: 'TIMESTAMP_MILLIS',
        logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' },
      };
    case 'uint64':
      // (No logical type: the library writes IntType's bitWidth as an i32 where Thrift wants a byte, which readers
      // refuse; the converted type UINT_64 says the same to every reader.)
      return { ...base, type: 'INT64', converted_type: 'UINT_64' };
    case 'decimal':
      return {
        ...base,
        type: 'FIXED_LEN_BYTE_ARRAY',
        type_length: 16,
        converted_type: 'DECIMAL',
        scale: 18,
        precision: 38,
        logical_type: { type: 'DECIMAL', scale: 18, precision: 38 },
      };
    case 'side':
    case 'string':
    case 'padded':
      return { ...base, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } };
  }
}

/** A growable byte buffer (page bodies, column buffers), of its own memory (at offset 0: word views align). */
class Bytes {
  buf: Buffer;
  length = 0;
  constructor(capacity: number) {
    this.buf = Buffer.allocUnsafeSlow(capacity);
  }
  ensure(more: number): void {
    if (this.length + more <= this.buf.length) return;
    const bigger = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.length + more));
    this.buf.copy(bigger, 0, 0, this.length);
    this.buf = bigger;
  }
  byte(v: number): void {
    this.ensure(1);
    this.buf[this.length++] = v;
  }
  /** An unsigned LEB128 (a non-negative integer below 2^53). */
  uleb(v: number): void {
    this.ensure(8);
    while (v >= 0x80) {
      this.buf[this.length++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.length++] = v;
  }
  /** A zigzag LEB128 (|v| below 2^52). */
  zigzag(v: number): void {
    this.uleb(v >= 0 ? v * 2 : -v * 2 - 1);
  }
  append(src: Uint8Array, from = 0, to = src.length): void {
    this.ensure(to - from);
    this.buf.set(src.subarray(from, to), this.length);
    this.length += to - from;
  }
  view(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

/** Bit-packs `count` values (each below 2^width) LSB first (parquet-format's "BIT_PACKED" order of RLE runs). */
class BitPacker {
  private acc = 0;
  private bits = 0;
  constructor(private readonly out: Bytes) {}

  /**
   * Appends one value of `width` bits (width ≤ 24 per call: callers split wider values). Fewer than 8 bits wait in
   * the accumulator, so it stays below 2^31: int32 arithmetic.
   */
  put(value: number, width: number): void {
    this.acc |= value << this.bits;
    this.bits += width;
    if (this.bits >= 8) {
      const out = this.out;
      out.ensure(4);
      while (this.bits >= 8) {
        out.buf[out.length++] = this.acc & 0xff;
        this.acc >>>= 8;
        this.bits -= 8;
      }
    }
  }

  /** A value of up to 53 bits, in pieces of at most 24. */
  putWide(value: number, width: number): void {
    while (width > 24) {
      const low = value % 0x1000000;
      this.put(low, 24);
      value = (value - low) / 0x1000000;
      width -= 24;
    }
    this.put(value, width);
  }

  /** Pads the last byte with zeros. */
  flush(): void {
    if (this.bits > 0) this.out.byte(this.acc & 0xff);
    this.acc = 0;
    this.bits = 0;
  }
}

/** Bits a non-negative integer below 2^53 needs (exactly: no floating-point logarithm). */
function bitWidth(max: number): number {
  if (max <= 0) return 0;
  if (max < TWO_32) return 32 - Math.clz32(max);
  return 64 - Math.clz32(Math.floor(max / TWO_32));
}

/**
 * `values` as RLE/bit-packed hybrid runs of `width` bits (parquet-format Encodings.md): one bit-packed run of
 * groups of 8, the last group padded with zeros.
 */
function writeHybrid(out: Bytes, values: Int32Array, count: number, width: number): void {
  const groups = Math.ceil(count / 8);
  out.uleb(groups * 2 + 1);
  if (width === 0) return;
  if (width === 8 || width === 16) {
    // Whole bytes (little-endian): LSB-first packing of 8- or 16-bit values is their bytes in order.
    const bytes = width / 8;
    out.ensure(groups * 8 * bytes);
    const buf = out.buf;
    let p = out.length;
    for (let i = 0; i < count; i++) {
      const v = values[i] as number;
      buf[p++] = v & 0xff;
      if (bytes === 2) buf[p++] = v >>> 8;
    }
    buf.fill(0, p, out.length + groups * 8 * bytes);
    out.length += groups * 8 * bytes;
    return;
  }
  const packer = new BitPacker(out);
  for (let i = 0; i < groups * 8; i++) packer.put(i < count ? (values[i] as number) : 0, width);
  packer.flush();
}

/**
 * DELTA_BINARY_PACKED of `count` integers (each below DELTA_LIMIT): blocks of 128 values in 4 miniblocks of 32.
 */
function writeDeltaBinaryPacked(out: Bytes, values: Float64Array, count: number): void {
  out.uleb(128);
  out.uleb(4);
  out.uleb(count);
  out.zigzag(count > 0 ? (values[0] as number) : 0);
  const deltas = new Float64Array(128);
  const packer = new BitPacker(out);
  for (let start = 1; start < count; start += 128) {
    const n = Math.min(128, count - start);
    let min = Infinity;
    for (let i = 0; i < n; i++) {
      const d = (values[start + i] as number) - (values[start + i - 1] as number);
      deltas[i] = d;
      if (d < min) min = d;
    }
    out.zigzag(min);
    const widths = [0, 0, 0, 0];
    for (let m = 0; m < 4; m++) {
      let max = 0;
      for (let i = m * 32; i < Math.min(n, m * 32 + 32); i++) max = Math.max(max, (deltas[i] as number) - min);
      widths[m] = bitWidth(max);
    }
    for (const w of widths) out.byte(w);
    // Miniblocks with values: 32 values each (the last padded); none after the last value.
    const miniblocks = Math.ceil(n / 32);
    for (let m = 0; m < miniblocks; m++) {
      const w = widths[m] as number;
      for (let i = m * 32; i < m * 32 + 32; i++) packer.putWide(i < n ? (deltas[i] as number) - min : 0, w);
      packer.flush();
    }
  }
}

const BOUNDS = new Int32Array(2);

/**
 * After this many values, a dictionary holding more than one in DICTIONARY_SHARE of them (decimals; strings: more
 * than half) is given up: the values repeat too little.
 */
const DICTIONARY_TRIAL = 4096;
/** Decimals: a dictionary is kept while it holds at most one distinct value in this many. */
const DICTIONARY_SHARE = 8;
/**
 * Where two encodings each win on some data (INT64: PLAIN or DELTA_BINARY_PACKED; dictionary indexes: bit-packed or
 * in whole bytes), both are compressed on a stream's first row group and every this many after, and the smaller
 * kept; the row groups between take the last trial's winner.
 */
const TRIAL_EVERY = 8;

/** An open-addressing hash table from 16-byte values (four int32 words) or byte strings to dictionary indexes. */
class Dictionary {
  private keys: Int32Array;
  private readonly slots: Int32Array;
  private readonly mask: number;
  size = 0;

  constructor(private readonly words: number) {
    const capacity = 2 * MAX_DICTIONARY;
    this.slots = new Int32Array(capacity).fill(-1);
    this.mask = capacity - 1;
    this.keys = new Int32Array(words * 1024);
  }

  /** Empties the table for the next column chunk (a stream's tables are reused: 512 KiB of slots each). */
  reset(): void {
    if (this.size === 0) return;
    this.slots.fill(-1);
    this.size = 0;
  }

  /** The index of the 16-byte value `src[o, o + 4)` (added when new), or -1 when the dictionary is full. */
  indexOfWords(src: Int32Array, o: number): number {
    const w0 = src[o] as number;
    const w1 = src[o + 1] as number;
    const w2 = src[o + 2] as number;
    const w3 = src[o + 3] as number;
    let h = Math.imul(w0 ^ Math.imul(w1, 0x9e3779b1) ^ Math.imul(w2 ^ w3, 0x85ebca6b), 0x2545f491) & this.mask;
    for (;;) {
      const at = this.slots[h] as number;
      if (at < 0) break;
      const k = at * 4;
      if (this.keys[k] === w0 && this.keys[k + 1] === w1 && this.keys[k + 2] === w2 && this.keys[k + 3] === w3)
        return at;
      h = (h + 1) & this.mask;
    }
    if (this.size >= MAX_DICTIONARY) return -1;
    const index = this.size++;
    if ((index + 1) * 4 > this.keys.length) {
      const bigger = new Int32Array(this.keys.length * 2);
      bigger.set(this.keys);
      this.keys = bigger;
    }
    const k = index * 4;
    this.keys[k] = w0;
    this.keys[k + 1] = w1;
    this.keys[k + 2] = w2;
    this.keys[k + 3] = w3;
    this.slots[h] = index;
    return index;
  }

  /**
   * The index of the byte string `src[from, to)` (added when new), or -1 when the dictionary is full; `bounds(index,
   * out)` puts where an indexed string lies in `src` into `out` ([from, to)).
   */
  indexOfBytes(src: Buffer, from: number, to: number, bounds: (index: number, out: Int32Array) => void): number {
    let h = 0x811c9dc5;
    for (let i = from; i < to; i++) h = Math.imul(h ^ (src[i] as number), 0x01000193);
    h = (h >>> 0) & this.mask;
    const other = BOUNDS;
    for (;;) {
      const at = this.slots[h] as number;
      if (at < 0) break;
      bounds(at, other);
      const a = other[0] as number;
      const n = (other[1] as number) - a;
      if (n === to - from) {
        let i = 0;
        while (i < n && src[a + i] === src[from + i]) i++;
        if (i === n) return at;
      }
      h = (h + 1) & this.mask;
    }
    if (this.size >= MAX_DICTIONARY) return -1;
    const index = this.size++;
    this.slots[h] = index;
    return index;
  }
}

/** One column's values of the row group being filled. */
class ColumnBuffer {
  /** Fixed columns: 32-bit words per value (2, or 4 for decimals). */
  readonly wordsPerValue: number;
  /** Fixed columns: the values as the rows had them (little-endian), `wordsPerValue` words each. */
  readonly words: Int32Array;
  /** The same memory as bytes. */
  readonly bytes: Buffer;
  /** Strings: their PLAIN encoding (length, bytes) end to end. */
  readonly data: Bytes;
  /** Strings: where each value ends in `data` (each is its 4-byte length and its bytes: PLAIN's layout). */
  ends: Int32Array | undefined;
  /** Sides: the codes (1, 2). */
  codes: Uint8Array | undefined;
  /** INT64 columns: the encoding that compressed smaller at the last trial (encodeInt64). */
  int64Winner: 'PLAIN' | 'DELTA_BINARY_PACKED' | undefined;
  /** Dictionary columns: whether indexes in whole bytes compressed smaller at the last trial (dictionaryChunk). */
  wideIndexes: boolean | undefined;

  constructor(
    readonly spec: ColumnSpec,
    rows: number,
  ) {
    this.wordsPerValue = spec.type === 'decimal' ? 4 : spec.type === 'timestamp' || spec.type === 'uint64' ? 2 : 0;
    this.words = new Int32Array(this.wordsPerValue * rows);
    this.bytes = Buffer.from(this.words.buffer, 0, this.words.byteLength);
    const text = spec.type === 'string' || spec.type === 'padded';
    this.data = new Bytes(text ? Math.max(16, 24 * rows) : 0);
    if (text) this.ends = new Int32Array(rows);
    if (spec.type === 'side') this.codes = new Uint8Array(rows);
  }
}

/** A column chunk written: its pages' bytes and what the footer says of it. */
interface EncodedChunk {
  pages: Buffer[];
  bytes: number;
  uncompressed: number;
  encodings: ('PLAIN' | 'RLE' | 'RLE_DICTIONARY' | 'DELTA_BINARY_PACKED')[];
  dictionaryPage: number | undefined;
  /** Offset of the data page from the chunk's start. */
  dataPage: number;
  physical: SchemaElement['type'];
}

function compress(body: Buffer): Buffer {
  return zstdCompressSync(body, { params: { [zlib.ZSTD_c_compressionLevel]: ZSTD_LEVEL } });
}

/** A page: its header (Thrift, by the library) and its compressed body. */
function page(
  header: Omit<Parameters<typeof writePageHeader>[1], 'uncompressed_page_size' | 'compressed_page_size'>,
  body: Buffer,
): { bytes: Buffer[]; length: number; uncompressed: number } {
  const compressed = compress(body);
  const w = new ByteWriter(64);
  writePageHeader(w, { ...header, uncompressed_page_size: body.length, compressed_page_size: compressed.length });
  const head = Buffer.from(w.getBytes());
  return {
    bytes: [head, compressed],
    length: head.length + compressed.length,
    uncompressed: head.length + body.length,
  };
}

/**
 * Writes a Parquet file of one kind's rows as they come (ColumnarSink: `add` takes one RowBinary row), one row group
 * of `rowGroupRows` at a time; `finish` ends it with the footer.
 */
export class ParquetStream implements ColumnarSink {
  readonly columns: ColumnSpec[];
  private readonly schema: SchemaElement[];
  private readonly buffers: ColumnBuffer[];
  /** The buffers of the fixed columns (timestamps, integers, decimals), and the others (sides, strings). */
  private readonly fixed: ColumnBuffer[];
  private readonly others: ColumnBuffer[];
  private rows = 0;
  private total = 0;
  /** Bytes written so far (the magic, and every row group), where the next row group begins. */
  private offset = 0;
  private readonly rowGroups: FileMetaData['row_groups'] = [];
  /** Encoded bytes not yet taken. */
  private ready: Buffer[] = [MAGIC];
  /** Where the Strings of the current row begin. */
  private readonly strings = new Int32Array(2);
  /** The dictionaries' hash tables, one for decimals and one for strings, emptied for each column chunk. */
  private readonly wordDictionary = new Dictionary(4);
  private readonly byteDictionary = new Dictionary(0);
  /**
   * Arrays a column chunk's encoding uses while it runs (columns are encoded one after another), of a row group's
   * length: allocated once per stream rather than per chunk, which kept the garbage collector busy.
   */
  private readonly scratch: { values: Float64Array; indexes: Int32Array; firsts: Int32Array };
  private readonly fixedSize: number;
  private readonly stringCount: number;

  constructor(
    kind: SeriesKind,
    fields: number,
    private readonly rowGroupRows = ROW_GROUP_ROWS,
  ) {
    this.columns = parquetColumns(kind, fields);
    this.schema = [{ name: 'schema', num_children: this.columns.length }, ...this.columns.map(schemaElement)];
    this.buffers = this.columns.map((c) => new ColumnBuffer(c, rowGroupRows));
    this.scratch = {
      values: new Float64Array(rowGroupRows),
      indexes: new Int32Array(rowGroupRows),
      firsts: new Int32Array(Math.min(rowGroupRows, MAX_DICTIONARY) + 1),
    };
    this.fixed = this.buffers.filter((b) => b.wordsPerValue > 0);
    this.others = this.buffers.filter((b) => b.wordsPerValue === 0);
    this.stringCount = this.columns.filter((c) => c.type === 'string').length;
    this.fixedSize =
      (kind === 'snapshot' ? 41 : 49) +
      ((fields & FIELD_RECEIVED) !== 0 ? 8 : 0) +
      ((fields & FIELD_VENUE_SEQ) !== 0 ? VENUE_SEQ_BYTES : 0);
    this.offset = MAGIC.length;
  }

  /** Takes the row at `src[o]` (a whole row of the JSON layout, its Strings included). */
  add(src: Buffer, o: number): void {
    if (this.stringCount > 0) {
      let q = o + this.fixedSize;
      for (let k = 0; k < this.stringCount; k++) {
        this.strings[k] = q;
        const b0 = src[q] as number;
        q += b0 < 0x80 ? 1 + b0 : 2 + ((b0 & 0x7f) | ((src[q + 1] as number) << 7));
      }
    }
    const row = this.rows;
    // The fixed columns word by word (4-byte reads of the row; the columns' words are aligned).
    const fixed = this.fixed;
    for (let k = 0; k < fixed.length; k++) {
      const buffer = fixed[k] as ColumnBuffer;
      const w = buffer.words;
      const n = buffer.wordsPerValue;
      const q = o + buffer.spec.at;
      const d = row * n;
      w[d] = i32(src, q);
      w[d + 1] = i32(src, q + 4);
      if (n === 4) {
        w[d + 2] = i32(src, q + 8);
        w[d + 3] = i32(src, q + 12);
      }
    }
    for (const buffer of this.others) {
      const { spec, data } = buffer;
      if (spec.type === 'side') {
        (buffer.codes as Uint8Array)[row] = src[o + spec.at] as number;
        continue;
      }
      let at: number;
      let n: number;
      if (spec.type === 'padded') {
        // A zero-padded fixed-width field of the row (venue_seq).
        at = o + spec.at;
        n = 0;
        while (n < VENUE_SEQ_BYTES && src[at + n] !== 0) n++;
      } else {
        const q = this.strings[spec.at] as number;
        const b0 = src[q] as number;
        n = b0 < 0x80 ? b0 : (b0 & 0x7f) | ((src[q + 1] as number) << 7);
        at = q + (b0 < 0x80 ? 1 : 2);
      }
      // As PLAIN stores it: a 4-byte little-endian length, then the bytes (a value is at most a few hundred bytes).
      data.ensure(n + 4);
      const buf = data.buf;
      let p = data.length;
      buf[p] = n & 0xff;
      buf[p + 1] = n >>> 8;
      buf[p + 2] = 0;
      buf[p + 3] = 0;
      p += 4;
      for (let j = at; j < at + n; j++) buf[p++] = src[j] as number;
      data.length = p;
      (buffer.ends as Int32Array)[row] = p;
    }
    this.rows++;
    if (this.rows === this.rowGroupRows) this.writeRowGroup();
  }

  /** The bytes encoded since the last call (the file's start, and each row group once full), if any. */
  take(): Buffer | undefined {
    if (this.ready.length === 0) return undefined;
    const out = this.ready.length === 1 ? (this.ready[0] as Buffer) : Buffer.concat(this.ready);
    this.ready = [];
    return out;
  }

  /** The rest of the file: the last row group, and the footer with `metadata` (key-value pairs). */
  finish(metadata: Record<string, string>): Buffer {
    if (this.rows > 0) this.writeRowGroup();
    const footer = new ByteWriter(4096);
    writeMetadata(footer, {
      version: 1,
      schema: this.schema,
      num_rows: BigInt(this.total),
      row_groups: this.rowGroups,
      metadata_length: 0,
      key_value_metadata: Object.entries(metadata).map(([key, value]) => ({ key, value })),
      created_by: 'depthgate history service',
    } as FileMetaData);
    this.ready.push(Buffer.from(footer.getBytes()), MAGIC);
    const out = this.take() as Buffer;
    return out;
  }

  /** Encodes the rows held as a row group, and starts the next. */
  private writeRowGroup(): void {
    const start = this.offset;
    const columns: ColumnChunk[] = [];
    let uncompressed = 0;
    for (let i = 0; i < this.buffers.length; i++) {
      const buffer = this.buffers[i] as ColumnBuffer;
      const chunk = this.encodeColumn(buffer, this.rows);
      const chunkStart = this.offset;
      this.ready.push(...chunk.pages);
      this.offset += chunk.bytes;
      uncompressed += chunk.uncompressed;
      const schema = this.schema[i + 1] as SchemaElement;
      columns.push({
        file_offset: BigInt(chunkStart),
        meta_data: {
          type: schema.type as NonNullable<SchemaElement['type']>,
          encodings: chunk.encodings,
          path_in_schema: [buffer.spec.name],
          codec: 'ZSTD',
          num_values: BigInt(this.rows),
          total_uncompressed_size: BigInt(chunk.uncompressed),
          total_compressed_size: BigInt(chunk.bytes),
          data_page_offset: BigInt(chunkStart + chunk.dataPage),
          ...(chunk.dictionaryPage === undefined ? {} : { dictionary_page_offset: BigInt(chunkStart) }),
        },
      } as ColumnChunk);
    }
    this.rowGroups.push({
      columns,
      total_byte_size: BigInt(uncompressed),
      num_rows: BigInt(this.rows),
      file_offset: BigInt(start),
      total_compressed_size: BigInt(this.offset - start),
    });
    this.total += this.rows;
    this.rows = 0;
    // The buffers are filled again (what was encoded from them was copied).
    for (const b of this.others) b.data.length = 0;
  }

  private encodeColumn(buffer: ColumnBuffer, rows: number): EncodedChunk {
    switch (buffer.spec.type) {
      case 'timestamp':
      case 'uint64':
        return this.encodeInt64(buffer, rows);
      case 'decimal':
        return this.encodeDecimal(buffer, rows);
      case 'side':
        return this.encodeSide(buffer, rows);
      case 'string':
      case 'padded':
        return this.encodeStrings(buffer, rows);
    }
  }

  /**
   * INT64: PLAIN (the row's bytes as they are) or, when every value is below DELTA_LIMIT, DELTA_BINARY_PACKED —
   * whichever compresses smaller. Neither wins everywhere: a constant step (a sequence counting one per row) packs to
   * a few bits a block, while timestamps shared by the rows of one message compress better PLAIN (ZSTD finds each
   * repeat; a miniblock of deltas is as wide as its largest, zeros included). Both are compressed on a stream's first
   * row group and every TRIAL_EVERY-th after; the row groups between take the last one's winner.
   */
  private encodeInt64(buffer: ColumnBuffer, rows: number): EncodedChunk {
    const plain = () => this.dataOnly(buffer.bytes.subarray(0, rows * 8), rows, 'PLAIN', 'INT64');
    const trial = this.rowGroups.length % TRIAL_EVERY === 0;
    if (!trial && buffer.int64Winner === 'PLAIN') return plain();
    const words = buffer.words;
    const values = this.scratch.values;
    for (let i = 0; i < rows; i++) {
      const hi = (words[2 * i + 1] as number) >>> 0;
      const v = hi * TWO_32 + ((words[2 * i] as number) >>> 0);
      if (hi >= 0x80000 || v >= DELTA_LIMIT) return plain();
      values[i] = v;
    }
    const body = new Bytes(rows + 64);
    writeDeltaBinaryPacked(body, values, rows);
    const delta = this.dataOnly(body.view(), rows, 'DELTA_BINARY_PACKED', 'INT64');
    if (!trial) return delta;
    const other = plain();
    const winner = delta.bytes < other.bytes ? delta : other;
    buffer.int64Winner = winner === delta ? 'DELTA_BINARY_PACKED' : 'PLAIN';
    return winner;
  }

  /**
   * Decimals: a dictionary of the distinct values when they repeat much (at most one distinct value in
   * DICTIONARY_SHARE rows: a book's prices in snapshots), else PLAIN; big-endian. A dictionary of fewer repeats
   * compresses worse than the values PLAIN (measured: docs/benchmarks.md, issue 23).
   */
  private encodeDecimal(buffer: ColumnBuffer, rows: number): EncodedChunk {
    const words = buffer.words;
    const dictionary = this.wordDictionary;
    dictionary.reset();
    const indexes = this.scratch.indexes;
    const most = Math.floor(rows / DICTIONARY_SHARE) + 16;
    for (let i = 0; i < rows; i++) {
      const index = dictionary.indexOfWords(words, i * 4);
      if (index < 0 || dictionary.size > most || (i === DICTIONARY_TRIAL && dictionary.size * DICTIONARY_SHARE > i))
        return this.plainChunk(bigEndian16(buffer.bytes, rows), rows, 'FIXED_LEN_BYTE_ARRAY');
      indexes[i] = index;
    }
    // The dictionary's values in index order: the first occurrence of each.
    const src = buffer.bytes;
    const values = Buffer.allocUnsafe(dictionary.size * 16);
    const seen = new Uint8Array(dictionary.size);
    for (let i = 0; i < rows; i++) {
      const index = indexes[i] as number;
      if (seen[index] === 0) {
        seen[index] = 1;
        reverse16(src, i * 16, values, index * 16);
      }
    }
    return this.dictionaryChunk(buffer, values, dictionary.size, indexes, rows, 'FIXED_LEN_BYTE_ARRAY');
  }

  /** Sides: a dictionary of the two names. */
  private encodeSide(buffer: ColumnBuffer, rows: number): EncodedChunk {
    const names = buffer.spec.names as readonly [string, string];
    const codes = buffer.codes as Uint8Array;
    const indexes = this.scratch.indexes;
    for (let i = 0; i < rows; i++) indexes[i] = (codes[i] as number) - 1;
    const values = new Bytes(16);
    for (const name of names) {
      values.ensure(4 + name.length);
      values.buf.writeUInt32LE(name.length, values.length);
      values.length += 4;
      values.append(Buffer.from(name, 'latin1'));
    }
    return this.dictionaryChunk(buffer, values.view(), 2, indexes, rows, 'BYTE_ARRAY');
  }

  /**
   * Strings: a dictionary when they repeat, else PLAIN (length, bytes) — the column's buffer as the rows wrote it. The
   * dictionary compares whole entries (length and bytes).
   */
  private encodeStrings(buffer: ColumnBuffer, rows: number): EncodedChunk {
    const src = buffer.data.buf;
    const ends = buffer.ends as Int32Array;
    const dictionary = this.byteDictionary;
    dictionary.reset();
    const firsts = this.scratch.firsts;
    const indexes = this.scratch.indexes;
    const bounds = (index: number, out: Int32Array) => {
      const row = firsts[index] as number;
      out[0] = row === 0 ? 0 : (ends[row - 1] as number);
      out[1] = ends[row] as number;
    };
    for (let i = 0; i < rows; i++) {
      const from = i === 0 ? 0 : (ends[i - 1] as number);
      const before = dictionary.size;
      // (A new value's first occurrence is noted before the table compares it with anything.)
      firsts[Math.min(before, firsts.length - 1)] = i;
      const index = dictionary.indexOfBytes(src, from, ends[i] as number, bounds);
      if (index < 0 || dictionary.size > rows / 4 + 16 || (i === DICTIONARY_TRIAL && dictionary.size * 2 > i))
        return this.plainChunk(buffer.data.view(), rows, 'BYTE_ARRAY');
      indexes[i] = index;
    }
    // The dictionary's values: the first occurrence of each, in index order (entries of at most a few hundred bytes:
    // copied byte by byte, cheaper than a call per value).
    let size = 0;
    for (let k = 0; k < dictionary.size; k++) {
      const i = firsts[k] as number;
      size += (ends[i] as number) - (i === 0 ? 0 : (ends[i - 1] as number));
    }
    const values = Buffer.allocUnsafe(size);
    let p = 0;
    for (let k = 0; k < dictionary.size; k++) {
      const i = firsts[k] as number;
      const to = ends[i] as number;
      for (let j = i === 0 ? 0 : (ends[i - 1] as number); j < to; j++) values[p++] = src[j] as number;
    }
    return this.dictionaryChunk(buffer, values, dictionary.size, indexes, rows, 'BYTE_ARRAY');
  }

  private plainChunk(body: Buffer, rows: number, physical: SchemaElement['type']): EncodedChunk {
    return this.dataOnly(body, rows, 'PLAIN', physical);
  }

  private dataOnly(
    body: Buffer,
    rows: number,
    encoding: 'PLAIN' | 'DELTA_BINARY_PACKED',
    physical: SchemaElement['type'],
  ): EncodedChunk {
    const data = page(
      {
        type: 'DATA_PAGE',
        data_page_header: {
          num_values: rows,
          encoding,
          definition_level_encoding: 'RLE',
          repetition_level_encoding: 'RLE',
        },
      },
      body,
    );
    return {
      pages: data.bytes,
      bytes: data.length,
      uncompressed: data.uncompressed,
      encodings: [encoding, 'RLE'],
      dictionaryPage: undefined,
      dataPage: 0,
      physical,
    };
  }

  private dictionaryChunk(
    buffer: ColumnBuffer,
    values: Buffer,
    count: number,
    indexes: Int32Array,
    rows: number,
    physical: SchemaElement['type'],
  ): EncodedChunk {
    const dictionary = page(
      { type: 'DICTIONARY_PAGE', dictionary_page_header: { num_values: count, encoding: 'PLAIN' } },
      values,
    );
    // Indexes of a few bits are bit-packed. Wider ones are bit-packed, or written in whole bytes (8 or 16 bits), which
    // lets ZSTD find runs that repeat (the levels of one book snapshot after another) that bit-packing at an odd width
    // hides from it, but costs where indexes do not repeat in runs: both are tried as INT64's encodings are.
    const bits = Math.max(1, bitWidth(count - 1));
    const indexPage = (width: number) => {
      const body = new Bytes(Math.ceil((rows * width) / 8) + 16);
      body.byte(width);
      writeHybrid(body, indexes, rows, width);
      return page(
        {
          type: 'DATA_PAGE',
          data_page_header: {
            num_values: rows,
            encoding: 'RLE_DICTIONARY',
            definition_level_encoding: 'RLE',
            repetition_level_encoding: 'RLE',
          },
        },
        body.view(),
      );
    };
    const bytes = bits <= 8 ? 8 : 16;
    let data: ReturnType<typeof page>;
    if (bits <= 4) data = indexPage(bits);
    else if (this.rowGroups.length % TRIAL_EVERY !== 0 && buffer.wideIndexes !== undefined)
      data = indexPage(buffer.wideIndexes ? bytes : bits);
    else {
      const packed = indexPage(bits);
      const whole = indexPage(bytes);
      buffer.wideIndexes = whole.length < packed.length;
      data = buffer.wideIndexes ? whole : packed;
    }
    return {
      pages: [...dictionary.bytes, ...data.bytes],
      bytes: dictionary.length + data.length,
      uncompressed: dictionary.uncompressed + data.uncompressed,
      encodings: ['PLAIN', 'RLE', 'RLE_DICTIONARY'],
      dictionaryPage: 0,
      dataPage: dictionary.length,
      physical,
    };
  }
}

/**
 * The 16-byte little-endian values of `data`, each reversed in place (Parquet's DECIMAL in a FIXED_LEN_BYTE_ARRAY is
 * big-endian): each 8-byte half reversed (Buffer.swap64), then the halves swapped. `data` (at a 4-byte boundary) is
 * refilled afterwards.
 */
function bigEndian16(data: Buffer, rows: number): Buffer {
  const out = data.subarray(0, rows * 16);
  out.swap64();
  const words = new Int32Array(out.buffer, out.byteOffset, rows * 4);
  for (let i = 0; i < words.length; i += 4) {
    const a = words[i] as number;
    const b = words[i + 1] as number;
    words[i] = words[i + 2] as number;
    words[i + 1] = words[i + 3] as number;
    words[i + 2] = a;
    words[i + 3] = b;
  }
  return out;
}

function reverse16(src: Buffer, from: number, out: Buffer, to: number): void {
  for (let k = 0; k < 16; k++) out[to + k] = src[from + 15 - k] as number;
}
