/**
 * Page cursors: where the next page of a snapshots, deltas, trades or bars answer begins, opaque to the caller and
 * signed by the service, so that a cursor cannot be forged, altered, or used for another walk than the one it was
 * issued for.
 *
 * A cursor is base64url of
 *
 *   version u8 (1) | kind u8 (1 snapshots, 2 deltas, 3 trades, 4 bars, 5 deltas with trades interleaved) |
 *   exchange u8 (its stored code, @depthgate/platforms) |
 *   ticker length u8 | ticker |
 *   caller tag (8 bytes) | position: ts i64, sequence u64, skip u32 | end of the range i64 (-1: open) |
 *   HMAC-SHA256 of all the above, first 16 bytes
 *
 * (big-endian). The position is the first row of the next page: deltas (trades, and the two interleaved) resume at
 * (ts, sequence) leaving out the first `skip` rows with exactly that key (they went out on the previous page; counted
 * rather than compared, so a page may end between rows that share both values); snapshots at the first book with
 * ts ≥ `ts` (pages end on whole books); bars at the bar starting at `ts`, their interval (ms) in `sequence`.
 * The caller tag binds the cursor to the key that received it (anonymous callers share one tag) without showing its
 * id: HMAC(secret, "caller\0" + key id), first 8 bytes.
 *
 * The secret is a setting (HISTORY_CURSOR_SECRET) that every replica must share, or a cursor from one replica fails
 * on the next; HISTORY_CURSOR_SECRET_PREVIOUS is still accepted while a new secret rolls out. A process without one
 * signs with a random secret of its own (a warning at start-up): cursors then work against that process only.
 */
import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import { EXCHANGES, type Caller, type ExchangeKey, type Exchanges } from '@depthgate/auth';
import { TICKER_PATTERN } from '@depthgate/history-store';
import { AppError } from '@depthgate/service-kit';
import type { SeriesKind } from './row-binary';

const CURSOR_VERSION = 1;

/** Where a read begins: its first row (see the module comment). */
export interface Position {
  ts: number;
  sequence: bigint;
  skip: number;
}

/** What a cursor walks: rows of a kind (interleaved: the deltas endpoint with include=trades), or bars. */
export type CursorKind = SeriesKind | 'bar';

export interface CursorData {
  kind: CursorKind;
  exchange: ExchangeKey;
  ticker: string;
  position: Position;
  /** Inclusive end of the walk's range (epoch ms); null: open. */
  to: number | null;
}

const KIND_CODE: Record<CursorKind, number> = { snapshot: 1, delta: 2, trade: 3, bar: 4, interleaved: 5 };
const KIND_OF_CODE = new Map(Object.entries(KIND_CODE).map(([kind, code]) => [code, kind as CursorKind]));
/** What the messages call each walk. */
const WALK: Record<CursorKind, string> = {
  snapshot: 'snapshots',
  delta: 'deltas',
  trade: 'trades',
  bar: 'bars',
  interleaved: 'deltas with trades (include=trades)',
};
const MAC_BYTES = 16;
const TAG_BYTES = 8;
const UINT64_MAX = 2n ** 64n - 1n;

function invalid(message: string): AppError {
  return new AppError('invalid_cursor', message);
}

export class CursorCodec {
  private readonly secrets: KeyObject[];

  /**
   * `secret` signs and verifies; `previous` only verifies (a rotation in progress). Without `secret`, a random one
   * (`random` is true then). `exchanges`: the recorded exchanges (the product's unless a test adds a fixture).
   */
  constructor(
    secrets: { secret?: string; previous?: string },
    private readonly exchanges: Exchanges<ExchangeKey> = EXCHANGES,
  ) {
    // KeyObjects: Node 24's createHmac given a key's bytes costs several times more (docs/benchmarks.md, gateway).
    const current = secrets.secret !== undefined ? Buffer.from(secrets.secret, 'utf8') : randomBytes(32);
    const previous = secrets.previous !== undefined ? [Buffer.from(secrets.previous, 'utf8')] : [];
    this.secrets = [current, ...previous].map((bytes) => createSecretKey(bytes));
    this.random = secrets.secret === undefined;
  }

  readonly random: boolean;

  encode(data: CursorData, caller: Caller | undefined): string {
    const ticker = Buffer.from(data.ticker, 'latin1');
    const body = Buffer.alloc(4 + ticker.length + TAG_BYTES + 8 + 8 + 4 + 8);
    let o = 0;
    o = body.writeUInt8(CURSOR_VERSION, o);
    o = body.writeUInt8(KIND_CODE[data.kind], o);
    o = body.writeUInt8(this.exchanges.codes[data.exchange], o);
    o = body.writeUInt8(ticker.length, o);
    o += ticker.copy(body, o);
    o += callerTag(this.secrets[0] as KeyObject, caller).copy(body, o);
    o = body.writeBigInt64BE(BigInt(data.position.ts), o);
    o = body.writeBigUInt64BE(data.position.sequence, o);
    o = body.writeUInt32BE(data.position.skip, o);
    body.writeBigInt64BE(BigInt(data.to ?? -1), o);
    return Buffer.concat([body, mac(this.secrets[0] as KeyObject, body)]).toString('base64url');
  }

  /**
   * The cursor's data, checked: well-formed, of this format, signed with our secret, and issued for this exchange,
   * ticker, kind and caller. Anything else is a 400 `invalid_cursor` saying which.
   */
  decode(
    text: string,
    expected: { kind: CursorKind; exchange: ExchangeKey; ticker: string; caller: Caller | undefined },
  ): CursorData {
    const raw = /^[A-Za-z0-9_-]{1,400}$/.test(text) ? Buffer.from(text, 'base64url') : Buffer.alloc(0);
    if (raw.length < 4 + MAC_BYTES) {
      throw invalid('cursor is not a cursor of this service: pass on the next_cursor of the previous page as it came');
    }
    const version = raw.readUInt8(0);
    if (version !== CURSOR_VERSION) {
      throw invalid(
        `cursor format ${version} is not accepted (this service issues format ${CURSOR_VERSION}): start again from start_ts`,
      );
    }
    const body = raw.subarray(0, raw.length - MAC_BYTES);
    const given = raw.subarray(raw.length - MAC_BYTES);
    const secret = this.secrets.find((s) => timingSafeEqual(mac(s, body), given));
    const tickerLength = raw.readUInt8(3);
    if (secret === undefined || body.length !== 4 + tickerLength + TAG_BYTES + 8 + 8 + 4 + 8) {
      throw invalid('cursor does not verify: it was altered, or issued by another deployment');
    }
    let o = 4;
    const kind = KIND_OF_CODE.get(raw.readUInt8(1));
    const exchange = this.exchanges.byCode(raw.readUInt8(2));
    const ticker = body.toString('latin1', o, o + tickerLength);
    o += tickerLength;
    const tag = body.subarray(o, o + TAG_BYTES);
    o += TAG_BYTES;
    const ts = body.readBigInt64BE(o);
    const sequence = body.readBigUInt64BE(o + 8);
    const skip = body.readUInt32BE(o + 16);
    const to = body.readBigInt64BE(o + 20);
    // Signed by us, so well-formed; checked anyway, as everything that reaches SQL is.
    if (
      kind === undefined ||
      exchange === undefined ||
      !TICKER_PATTERN.test(ticker) ||
      ts < 0n ||
      ts > BigInt(Number.MAX_SAFE_INTEGER) ||
      sequence > UINT64_MAX ||
      to < -1n ||
      to > BigInt(Number.MAX_SAFE_INTEGER)
    ) {
      throw invalid('cursor is not a cursor of this service');
    }
    const issuedFor = `${WALK[kind]} of ${ticker} on ${exchange}`;
    if (kind !== expected.kind || exchange !== expected.exchange || ticker !== expected.ticker) {
      const here = `${WALK[expected.kind]} of ${expected.ticker} on ${expected.exchange}`;
      throw invalid(`cursor was issued for the ${issuedFor}, not the ${here}`);
    }
    if (!callerTag(secret, expected.caller).equals(tag)) {
      throw invalid('cursor was issued to another caller: a cursor works only with the key that received it');
    }
    return {
      kind,
      exchange,
      ticker,
      position: { ts: Number(ts), sequence, skip },
      to: to === -1n ? null : Number(to),
    };
  }
}

function mac(secret: KeyObject, body: Buffer): Buffer {
  return createHmac('sha256', secret).update(body).digest().subarray(0, MAC_BYTES);
}

/** Who a cursor belongs to, without showing it: a key's id, or every anonymous caller. */
function callerTag(secret: KeyObject, caller: Caller | undefined): Buffer {
  const who = caller?.kind === 'key' ? `key:${caller.key.id}` : 'anonymous';
  return createHmac('sha256', secret).update(`caller\0${who}`).digest().subarray(0, TAG_BYTES);
}
