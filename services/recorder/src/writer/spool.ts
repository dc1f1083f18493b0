/**
 * The spool: append-only files of sealed batches that could not stay in memory (ClickHouse down or slower than the
 * feeds), per table, replayed in order — while running as soon as ClickHouse accepts inserts again, and at start.
 *
 * Layout: `<dir>/<table>/<12-digit number>.spool`, a new file at every start and every RECORDER_SPOOL_FILE_BYTES.
 * A record is
 *
 *   u32 header length | u32 body length | u32 CRC-32 of header and body | header (JSON) | body (TabSeparated rows)
 *
 * (little-endian). The header carries what the writer needs besides the rows: the line format of the rows (`rowFormat`,
 * @depthgate/history-store ROW_FORMATS; absent in records of recorders older than migration 2, whose lines have no
 * `received_ts`: those are format 1 and are inserted as such, their rows reading `received_ts` = `ts`), row and byte
 * counts per exchange, the
 * natural key of the last row (probe), the lag runs, the query id of an insert attempt abandoned at shutdown (the
 * replay makes sure that query has ended on the server before it probes, so it cannot commit after the probe), and the
 * recorder term the batch was produced under (`term`, redundant recording; absent: 0, solo, and every older record).
 * The header's version stays 1 for these optional fields, so a build that predates one still reads the record (a
 * version it does not know would end the file for it, dropping the rest). Every append is written with one write() and fdatasync'd before
 * the writer forgets the batch, so a batch acknowledged to the spool survives a crash. A record cut short by a crash
 * (length past the end, CRC mismatch) ends its file: what follows is unreadable and is dropped with an error log.
 * Records are replayed with a probe first (a replay may have succeeded just before a crash), so a record is never
 * written twice. A file is deleted once every record in it is in ClickHouse.
 */
import {
  closeSync,
  fdatasyncSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import type { Logger } from '@depthgate/service-kit';
import { ROW_FORMATS, type InsertTable, type ProbeKey, type RowFormat } from '@depthgate/history-store';
import { addCounts, type SealedBatch } from './batch';

const PREFIX = 12;
const FILE_PATTERN = /^(\d{12})\.spool$/;
/** Numbering starts high, so batches can be put in front (prepend) with lower numbers. */
const FIRST_NUMBER = 100_000_000_000;
const fileNumber = (name: string) => Number(FILE_PATTERN.exec(name)?.[1] ?? FIRST_NUMBER);

interface Header {
  v: 1;
  /** The recorder term the rows were produced under (absent: 0, solo). */
  term?: number;
  table: InsertTable;
  /** Absent: format 1 (written before migration 2). */
  rowFormat?: RowFormat;
  rows: number;
  rowsByExchange: number[];
  bytesByExchange: number[];
  runs: number[];
  probe: ProbeKey;
  maybeWritten: boolean;
  /** The query id of the batch's last insert attempt: a replay makes sure it has ended before it probes. */
  lastQueryId?: string;
}

interface SpoolFile {
  name: string;
  file: string;
  /** Bytes in the file (appended so far). */
  size: number;
  /** Records of this file not yet acknowledged start here. */
  readOffset: number;
}

/** Encodes one batch as a spool record. */
export function encodeRecord(batch: SealedBatch): Buffer {
  const header: Header = {
    v: 1,
    ...(batch.term ? { term: batch.term } : {}),
    table: batch.table,
    rowFormat: batch.rowFormat,
    rows: batch.rows,
    rowsByExchange: batch.rowsByExchange,
    bytesByExchange: batch.bytesByExchange,
    runs: batch.runs,
    probe: batch.probe,
    maybeWritten: batch.maybeWritten,
    ...(batch.lastQueryId === undefined ? {} : { lastQueryId: batch.lastQueryId }),
  };
  const head = Buffer.from(JSON.stringify(header), 'utf8');
  const body = batch.chunks.length === 1 ? (batch.chunks[0] as Buffer) : Buffer.concat(batch.chunks);
  const prefix = Buffer.alloc(PREFIX);
  prefix.writeUInt32LE(head.length, 0);
  prefix.writeUInt32LE(body.length, 4);
  prefix.writeUInt32LE(crc32(body, crc32(head)), 8);
  return Buffer.concat([prefix, head, body]);
}

export type DecodeResult =
  { ok: true; batch: SealedBatch; length: number } | { ok: false; reason: 'end' | 'truncated' | 'corrupt' };

let nextSpoolId = 1_000_000_000;

/** Closes and deletes a spool file that was not written whole. */
function discard(fd: number, file: string): void {
  closeSync(fd);
  try {
    unlinkSync(file);
  } catch {
    // (gone already, or the disk refuses even that: a later start reads it as a torn record, or an empty file)
  }
}

/** Decodes the record at `offset` of an open file of `size` bytes. */
export function readRecord(fd: number, offset: number, size: number, file: string): DecodeResult {
  if (offset >= size) return { ok: false, reason: 'end' };
  if (size - offset < PREFIX) return { ok: false, reason: 'truncated' };
  const prefix = Buffer.alloc(PREFIX);
  readSync(fd, prefix, 0, PREFIX, offset);
  const headLength = prefix.readUInt32LE(0);
  const bodyLength = prefix.readUInt32LE(4);
  const length = PREFIX + headLength + bodyLength;
  if (headLength === 0 || offset + length > size) return { ok: false, reason: 'truncated' };
  const data = Buffer.alloc(headLength + bodyLength);
  readSync(fd, data, 0, data.length, offset + PREFIX);
  const head = data.subarray(0, headLength);
  const body = data.subarray(headLength);
  if (crc32(body, crc32(head)) !== prefix.readUInt32LE(8)) return { ok: false, reason: 'corrupt' };
  let header: Header;
  try {
    header = JSON.parse(head.toString('utf8')) as Header;
  } catch {
    return { ok: false, reason: 'corrupt' };
  }
  if (header.v !== 1) return { ok: false, reason: 'corrupt' };
  const term = typeof header.term === 'number' ? header.term : 0;
  const rowFormat = header.rowFormat ?? 1;
  if (!(ROW_FORMATS as readonly unknown[]).includes(rowFormat)) return { ok: false, reason: 'corrupt' };
  return {
    ok: true,
    length,
    batch: {
      id: nextSpoolId++,
      table: header.table,
      rowFormat,
      chunks: [Buffer.from(body)],
      pooled: [],
      rows: header.rows,
      bytes: body.length,
      rowsByExchange: header.rowsByExchange,
      bytesByExchange: header.bytesByExchange,
      runs: header.runs,
      probe: header.probe,
      // Always probed before a replay: a replay may have landed just before the process ended.
      maybeWritten: true,
      ...(typeof header.lastQueryId === 'string' ? { lastQueryId: header.lastQueryId } : {}),
      term,
      spool: { file, offset, length },
    },
  };
}

/**
 * The spool of one writer lane (`<dir>/<name>/`: `book` holds the deltas, gaps and snapshots of the ordered book
 * lane, in insert order; `trades`, `verifications`; and the per-table `deltas`, `gaps`, `snapshots` directories an
 * older build left, replayed first). Each record names its table. Synchronous I/O: it runs only when ClickHouse cannot keep up, and it must be durable. */
export class TableSpool {
  private readonly dir: string;
  private readonly files: SpoolFile[] = [];
  private writeFd: number | undefined;
  private writeFile: SpoolFile | undefined;
  private readFd: { name: string; fd: number } | undefined;
  private head: SealedBatch | undefined;
  /** Payload bytes pending, per exchange index (the `recorder_spool_bytes` gauge). */
  readonly pendingBytesByExchange: number[] = [];
  readonly pendingRowsByExchange: number[] = [];
  /** Records pending. */
  pendingRecords = 0;

  constructor(
    root: string,
    readonly name: string,
    private readonly fileBytes: number,
    private readonly logger?: Logger,
  ) {
    this.dir = path.join(root, name);
    mkdirSync(this.dir, { recursive: true });
    for (const name of readdirSync(this.dir)
      .filter((n) => FILE_PATTERN.test(n))
      .sort()) {
      const file = path.join(this.dir, name);
      const size = statSync(file).size;
      if (size === 0) {
        unlinkSync(file);
        continue;
      }
      this.files.push({ name, file, size, readOffset: 0 });
    }
    this.scanExisting();
  }

  /** Counts what earlier runs left, and marks it for probing (a replay may have landed just before they ended). */
  private scanExisting(): void {
    for (const f of [...this.files]) {
      const fd = openSync(f.file, 'r');
      try {
        let offset = 0;
        for (;;) {
          const r = readRecord(fd, offset, f.size, f.file);
          if (!r.ok) {
            if (r.reason !== 'end') {
              this.logger?.error(
                { file: f.file, offset, reason: r.reason, lost_bytes: f.size - offset },
                'spool file ends in an unreadable record (a crash while spooling); the rest of the file is skipped',
              );
              f.size = offset;
            }
            break;
          }
          this.count(r.batch, 1);
          offset += r.length;
        }
      } finally {
        closeSync(fd);
      }
      if (f.size === 0) {
        unlinkSync(f.file);
        this.files.splice(this.files.indexOf(f), 1);
      }
    }
  }

  private count(batch: SealedBatch, sign: 1 | -1): void {
    addCounts(this.pendingBytesByExchange, batch.bytesByExchange, sign);
    addCounts(this.pendingRowsByExchange, batch.rowsByExchange, sign);
    this.pendingRecords += sign;
  }

  get empty(): boolean {
    return this.pendingRecords === 0;
  }

  /** Bytes on disk not yet replayed (framing included). */
  get pendingBytes(): number {
    return this.files.reduce((n, f) => n + (f.size - f.readOffset), 0);
  }

  /** Appends a batch durably (write + fdatasync) before returning. */
  append(batch: SealedBatch): void {
    const record = encodeRecord(batch);
    if (this.writeFile === undefined || this.writeFile.size + record.length > this.fileBytes) this.rotate();
    const f = this.writeFile as SpoolFile;
    const fd = this.writeFd as number;
    let written = 0;
    while (written < record.length)
      written += writeSync(fd, record, written, record.length - written, f.size + written);
    fdatasyncSync(fd);
    f.size += record.length;
    this.count(batch, 1);
  }

  private rotate(): void {
    // Forgotten before the next file is made: if that fails, the next append tries again, and never closes this
    // descriptor a second time (by then its number may be another file's or socket's).
    const fd = this.writeFd;
    this.writeFd = undefined;
    this.writeFile = undefined;
    if (fd !== undefined) closeSync(fd);
    const last = this.files.at(-1);
    const number = last ? fileNumber(last.name) + 1 : FIRST_NUMBER;
    const created = this.createFile(number);
    this.writeFd = created.fd;
    this.writeFile = created.file;
    this.files.push(created.file);
  }

  private createFile(number: number): { fd: number; file: SpoolFile } {
    const name = `${String(number).padStart(12, '0')}.spool`;
    const file = path.join(this.dir, name);
    const fd = openSync(file, 'wx');
    try {
      const dirFd = openSync(this.dir, 'r');
      try {
        fsyncSync(dirFd);
      } finally {
        closeSync(dirFd);
      }
    } catch (err) {
      // Its name not durable: the file goes, so that the next attempt can create it.
      discard(fd, file);
      throw err;
    }
    return { fd, file: { name, file, size: 0, readOffset: 0 } };
  }

  /**
   * Puts batches in front of everything pending (at shutdown: the memory queue is older than the spool), in a file
   * numbered below the first one, written and fdatasync'd before returning.
   */
  prepend(batches: readonly SealedBatch[]): void {
    if (batches.length === 0) return;
    const first = this.files[0];
    const number = first ? fileNumber(first.name) - 1 : FIRST_NUMBER;
    const { fd, file } = this.createFile(number);
    try {
      for (const batch of batches) {
        const record = encodeRecord(batch);
        let written = 0;
        while (written < record.length) {
          written += writeSync(fd, record, written, record.length - written, file.size + written);
        }
        file.size += record.length;
      }
      fdatasyncSync(fd);
    } catch (err) {
      // Nothing of it counts: the file goes (a later prepend takes the same number), the spool is as it was.
      discard(fd, file.file);
      throw err;
    }
    closeSync(fd);
    for (const batch of batches) this.count(batch, 1);
    this.head = undefined; // (it is read again from the front)
    this.files.unshift(file);
  }

  /** The oldest pending batch, read from disk (kept until ack). */
  peek(): SealedBatch | undefined {
    if (this.head) return this.head;
    for (;;) {
      const f = this.files[0];
      if (f === undefined) return undefined;
      if (f.readOffset >= f.size) {
        if (f === this.writeFile) return undefined;
        this.dropFile(f);
        continue;
      }
      const fd = this.readFdFor(f);
      const r = readRecord(fd, f.readOffset, f.size, f.file);
      if (!r.ok) {
        this.logger?.error(
          { file: f.file, offset: f.readOffset, reason: r.reason },
          'unreadable spool record; skipping the rest of the file',
        );
        f.size = f.readOffset;
        continue;
      }
      this.head = r.batch;
      return r.batch;
    }
  }

  /** The batch from peek() is in ClickHouse. */
  ack(batch: SealedBatch): void {
    if (batch !== this.head || !batch.spool) throw new Error('ack of a batch that is not the spool head');
    const f = this.files[0] as SpoolFile;
    f.readOffset += batch.spool.length;
    this.head = undefined;
    this.count(batch, -1);
    if (f.readOffset >= f.size) {
      if (f === this.writeFile) {
        // Drained up to the write position: start the next append in a new file, so this one can go.
        closeSync(this.writeFd as number);
        this.writeFd = undefined;
        this.writeFile = undefined;
      }
      this.dropFile(f);
    }
  }

  private readFdFor(f: SpoolFile): number {
    if (this.readFd?.name !== f.name) {
      if (this.readFd) closeSync(this.readFd.fd);
      this.readFd = { name: f.name, fd: openSync(f.file, 'r') };
    }
    // A file written by this process grows; its size is tracked in memory, so no stat is needed.
    return this.readFd.fd;
  }

  private dropFile(f: SpoolFile): void {
    if (this.readFd?.name === f.name) {
      closeSync(this.readFd.fd);
      this.readFd = undefined;
    }
    unlinkSync(f.file);
    this.files.splice(this.files.indexOf(f), 1);
  }

  close(): void {
    if (this.readFd) closeSync(this.readFd.fd);
    this.readFd = undefined;
    if (this.writeFd !== undefined) {
      fdatasyncSync(this.writeFd);
      closeSync(this.writeFd);
    }
    this.writeFd = undefined;
    this.writeFile = undefined;
    this.head = undefined;
  }
}
