/**
 * Helpers for the recorder's tests (src/testing/: not part of the build): a sink that keeps rows as objects, rule-7
 * book arithmetic over those rows, and a feed session driven by hand.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { ExchangeKey } from '@depthgate/platforms';
import { createLogger } from '@depthgate/service-kit';
import { CanonicalMemo, SIDE_NAME, type LocalBook, type SideCode, formatDecimal, parseDecimal } from '@depthgate/feeds';
import type { VerificationMethod } from '@depthgate/history-store';
import type { RecordedTrade, RowSink } from '../rows';
import { TickerRecorder, type OpenTradeWindow } from '../ticker';
import { venueProtocol, type FeedProtocol, type SessionContext, type VenueProtocol } from '../venues/types';
import { RestClient } from '../venues/rest';
import type { SealedBatch } from '../writer/batch';
import { TsvSink } from '../writer/sink';
import { Writer, type WriterOptions, type WriterStore } from '../writer/writer';

export interface Row {
  kind: 'delta' | 'snapshot' | 'gap' | 'trade';
  exchange: ExchangeKey;
  ticker: string;
  ts: number;
  sequence?: number;
  side?: 'bid' | 'ask';
  price?: string;
  quantity?: string;
  quantityDelta?: string;
  fromTs?: number;
  toTs?: number;
  reason?: string;
  /** Gaps: when the recorder detected the loss (stored gaps; the ListSink's keep it too). */
  detectedAt?: number;
  /** The recorder's receive clock for the row (deltas, snapshots, trades). */
  receivedTs?: number;
  /** Trades: the id, size, taker's side and the venue's side. */
  tradeId?: string;
  size?: string;
  tradeSide?: 'buy' | 'sell';
  venueSide?: string;
  /** Gaps: `book` or `trades`. */
  stream?: 'book' | 'trades';
  /** Deltas, snapshots, trades: the venue's ordering of the message ('' for none). */
  venueSeq?: string;
}

/** A verification point the recorder wrote. */
export interface VerificationPoint {
  exchange: ExchangeKey;
  ticker: string;
  ts: number;
  method: VerificationMethod;
  detectedAt: number;
}

export class ListSink implements RowSink {
  readonly rows: Row[] = [];
  /** Verification points, apart from the rows (rule 7 and the row order checks do not see them). */
  readonly verifications: VerificationPoint[] = [];

  delta(
    exchange: ExchangeKey,
    ticker: string,
    ts: number,
    sequence: number,
    side: SideCode,
    price: string,
    quantityDelta: string,
    receivedTs: number,
    venueSeq: string,
  ): void {
    this.rows.push({
      kind: 'delta',
      exchange,
      ticker,
      ts,
      sequence,
      side: SIDE_NAME[side],
      price,
      quantityDelta,
      receivedTs,
      venueSeq,
    });
  }

  snapshot(
    exchange: ExchangeKey,
    ticker: string,
    ts: number,
    book: LocalBook,
    receivedTs: number,
    venueSeq: string,
  ): void {
    for (const [side, levels] of [
      ['bid', book.bids],
      ['ask', book.asks],
    ] as const) {
      for (const [price, level] of levels) {
        this.rows.push({
          kind: 'snapshot',
          exchange,
          ticker,
          ts,
          side,
          price,
          quantity: formatDecimal(level.q),
          receivedTs,
          venueSeq,
        });
      }
    }
  }

  trade({ side, ...trade }: RecordedTrade): void {
    this.rows.push({ kind: 'trade', ...trade, tradeSide: side });
  }

  gap(
    exchange: ExchangeKey,
    ticker: string,
    fromTs: number,
    toTs: number,
    reason: string,
    detectedAt?: number,
    stream: 'book' | 'trades' = 'book',
  ): void {
    this.rows.push({ kind: 'gap', exchange, ticker, ts: toTs, fromTs, toTs, reason, detectedAt, stream });
  }

  verification(
    exchange: ExchangeKey,
    ticker: string,
    ts: number,
    method: VerificationMethod,
    detectedAt: number,
  ): void {
    this.verifications.push({ exchange, ticker, ts, method, detectedAt });
  }

  of(kind: Row['kind']): Row[] {
    return this.rows.filter((r) => r.kind === kind);
  }

  clear(): void {
    this.rows.length = 0;
    this.verifications.length = 0;
  }
}

/** A book as `side:canonicalPrice` → canonical quantity. */
export type FlatBook = Record<string, string>;

export function flat(levels: { bids: [string, string][]; asks: [string, string][] }): FlatBook {
  const out: FlatBook = {};
  for (const [p, q] of levels.bids)
    if (parseDecimal(q) !== 0n) out[`bid:${formatDecimal(parseDecimal(p))}`] = formatDecimal(parseDecimal(q));
  for (const [p, q] of levels.asks)
    if (parseDecimal(q) !== 0n) out[`ask:${formatDecimal(parseDecimal(p))}`] = formatDecimal(parseDecimal(q));
  return out;
}

/**
 * The spec's rule 7 over rows: the latest snapshot at or before T, then every delta with snapshot ts <= ts <= T in
 * (ts, sequence) order, adding quantity_delta per (side, price) and removing a level at zero. Undefined when no
 * snapshot precedes T.
 */
export function rebuild(rows: readonly Row[], t: number): FlatBook | undefined {
  let s = -1;
  for (const r of rows) if (r.kind === 'snapshot' && r.ts <= t && r.ts > s) s = r.ts;
  if (s < 0) return undefined;
  const book = new Map<string, bigint>();
  for (const r of rows) {
    if (r.kind === 'snapshot' && r.ts === s) book.set(`${r.side}:${r.price}`, parseDecimal(r.quantity ?? '0'));
  }
  const deltas = rows
    .filter((r) => r.kind === 'delta' && r.ts >= s && r.ts <= t)
    .sort((a, b) => a.ts - b.ts || (a.sequence ?? 0) - (b.sequence ?? 0));
  for (const d of deltas) {
    const key = `${d.side}:${formatDecimal(parseDecimal(d.price ?? '0'))}`;
    const q = (book.get(key) ?? 0n) + parseDecimal(d.quantityDelta ?? '0');
    if (q === 0n) book.delete(key);
    else book.set(key, q);
  }
  const out: FlatBook = {};
  for (const [k, q] of book) out[k] = formatDecimal(q);
  return out;
}

/**
 * A writer for tests on a store of their own: a spool in a fresh temporary folder, bounds far above what a test writes,
 * a silent logger. `dispose()` closes it and removes the spool.
 */
export function testWriter(
  store: WriterStore,
  options: Partial<WriterOptions> = {},
): { writer: Writer; dispose(): Promise<void> } {
  const spoolDir = mkdtempSync(path.join(os.tmpdir(), 'dg-writer-'));
  const writer = new Writer({
    store,
    spoolDir,
    maxMemoryBytes: 1 << 24,
    maxSpoolBytes: 1 << 30,
    spoolFileBytes: 1 << 24,
    insertTimeoutMs: 5000,
    logger: createLogger({ name: 'test', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) }),
    ...options,
  });
  return {
    writer,
    async dispose() {
      await writer.close(1000);
      rmSync(spoolDir, { recursive: true, force: true });
    },
  };
}

/** One sealed batch of `rows` delta rows of one ticker (consecutive ts and sequences from 1). */
export function deltaBatch(rows: number, o: { exchange: ExchangeKey; ticker: string; ts: number }): SealedBatch {
  const sealed: SealedBatch[] = [];
  const sink = new TsvSink(
    { maxRows: 1_000_000, maxBytes: 1 << 24, maxDelayMs: 1000 },
    () => 0,
    (b) => sealed.push(b),
  );
  for (let i = 0; i < rows; i++)
    sink.delta(o.exchange, o.ticker, o.ts + i, i + 1, i % 2 === 0 ? 1 : 2, '0.4200', '-3.50', o.ts + i, '');
  sink.tick(0, true);
  return sealed[0] as SealedBatch;
}

/** A feed protocol placed as the recorder places it (no credentials: nothing is signed). */
export const placed = (feed: FeedProtocol, exchange: ExchangeKey): VenueProtocol =>
  venueProtocol(feed, { exchange, platform: exchange, feedUrl: 'ws://x', signer: undefined });

const silent = createLogger({ name: 't', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });

/**
 * A session of `protocol` on tickers of their own recorders (a ListSink, a clock the test moves), driven by `msg`.
 * With `trades`, the recorders record trades and hand the windows the feed missed to `windows`.
 */
export function sessionHarness(
  protocol: VenueProtocol,
  tickers: string[],
  options: { venueClock?: boolean; trades?: boolean; rest?: RestClient } = {},
) {
  const sink = new ListSink();
  const clock = { now: 1_000_000 };
  const sent: unknown[] = [];
  const rejected: string[] = [];
  const reconnects: string[] = [];
  const windows: { ticker: string; window: OpenTradeWindow }[] = [];
  const malformed: string[] = [];
  const checksums: string[] = [];
  const recs = new Map<string, TickerRecorder>();
  for (const t of tickers) {
    recs.set(
      t,
      new TickerRecorder(
        protocol.exchange as ExchangeKey,
        t,
        { lastTs: -1, sequence: 0 },
        {
          sink,
          now: () => clock.now,
          price: new CanonicalMemo(),
          snapshotIntervalMs: 3_600_000,
          quietMs: 1000,
          venueClock: options.venueClock ?? protocol.venueClock,
          provesContinuity: protocol.provesContinuity,
          onBroken: () => undefined,
          onTradeWindow: options.trades ? (r, window) => windows.push({ ticker: r.ticker, window }) : undefined,
        },
      ),
    );
  }
  const ctx: SessionContext = {
    exchange: protocol.exchange,
    logger: silent,
    send: (text) => sent.push(text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : text),
    ticker: (t) => recs.get(t),
    now: () => clock.now,
    rejectTicker: (t) => rejected.push(t),
    reconnect: (r) => reconnects.push(r),
    rest: options.rest ?? new RestClient({ baseUrl: 'http://127.0.0.1:9', ratePerSecond: 0, timeoutMs: 1000 }),
    malformed: (problem) => malformed.push(problem),
    checksum: (result) => checksums.push(result),
  };
  const session = protocol.createSession(ctx);
  const msg = (m: unknown) => session.onMessage(JSON.stringify(m), clock.now);
  /** A frame as the venue sent it (text, not re-encoded): truncated or non-JSON messages. */
  const raw = (text: string) => session.onMessage(text, clock.now);
  return { sink, clock, sent, rejected, reconnects, recs, session, msg, raw, windows, malformed, checksums };
}
