/**
 * Redundant recording (issue 27): the recorder's RowSink in front of the writer. Each row of a ticker the recorder
 * owns goes to the writer's sink; a row of any other ticker (it is the standby, or it offered the ticker to a peer and
 * waits for the answer) goes to the StandbyBuffer. The controller moves tickers with `setOwned`. Solo mode does not
 * use it: the tickers write straight to the writer's sink, as before (no per-row cost).
 */
import type { ExchangeKey } from '@depthgate/platforms';
import type { LocalBook, SideCode } from '@depthgate/feeds';
import type { GapStream, VerificationMethod } from '@depthgate/history-store';
import type { GapReason, RecordedTrade, RowSink } from '../rows';
import type { StandbyBuffer } from './standby-buffer';

/**
 * What an owned ticker's rows sent to the writer end with: the largest ts of its book rows, the deltas at that ts (in
 * order), its largest sequence and its last trade's ts. A releasing owner publishes it for the peer that takes the
 * ticker: the splice point is what the owner produced (landed or spooled), not what landed.
 */
export interface ProducedEnd {
  lastTs: number;
  sequence: number;
  lastTradeTs: number;
  deltasAtLast: Array<{ side: SideCode; price: string; quantityDelta: string; sequence: number }>;
}

export class RoutingSink implements RowSink {
  /** Owned tickers per exchange (a ticker is the standby's until set owned), each with the end of what it wrote. */
  private readonly owned = new Map<ExchangeKey, Map<string, ProducedEnd>>();
  /** Tickers this recorder wrote and handed over: where the new owner's series starts (trades before it stay ours). */
  private readonly handed = new Map<ExchangeKey, Map<string, number>>();

  constructor(
    private readonly owner: RowSink,
    private readonly buffer: StandbyBuffer,
  ) {}

  /** Routes the ticker's next rows to the writer (`owned`) or to the standby buffer. */
  setOwned(exchange: ExchangeKey, ticker: string, owned: boolean): void {
    let ends = this.owned.get(exchange);
    if (ends === undefined) {
      ends = new Map();
      this.owned.set(exchange, ends);
    }
    let handed = this.handed.get(exchange);
    if (handed === undefined) {
      handed = new Map();
      this.handed.set(exchange, handed);
    }
    if (!owned) {
      const end = ends.get(ticker);
      if (end !== undefined && end.lastTs >= 0) handed.set(ticker, end.lastTs + 1);
      ends.delete(ticker);
    } else {
      handed.delete(ticker);
      if (!ends.has(ticker)) ends.set(ticker, { lastTs: -1, sequence: 0, lastTradeTs: -1, deltasAtLast: [] });
    }
  }

  /**
   * The ticker left the recording for good (Controller.forget; not owned: released first): no row of it comes any
   * more, so neither where it was handed over (no late trade of it) nor its buffered rows (no splice of it) are needed.
   * Without this both stayed for every ticker the recorder ever stopped recording.
   */
  forget(exchange: ExchangeKey, ticker: string): void {
    this.handed.get(exchange)?.delete(ticker);
    this.buffer.drop(exchange, ticker);
  }

  /** The end of what the ticker wrote since it was last set owned (undefined: not owned, or nothing written). */
  endOf(exchange: ExchangeKey, ticker: string): ProducedEnd | undefined {
    const end = this.owned.get(exchange)?.get(ticker);
    return end === undefined || end.lastTs < 0 ? undefined : end;
  }

  /**
   * Routes the ticker to the writer again, after writing there every row of it the buffer holds, as produced (an
   * owned ticker's loss routed it to the buffer while its offer was out, and no peer took it: the stored stream is
   * the one a solo recorder writes, its gap before the snapshot that closes it). The buffer forgets the ticker.
   * A `pendingGap` in the answer: rows were folded out of the buffer meanwhile and none of its snapshots is held; a
   * `handover` gap from there is owed (the ticker must resync: TickerRecorder.lose, then onBroken).
   */
  handBack(
    exchange: ExchangeKey,
    ticker: string,
    now: number,
  ): { rows: number; pendingGap?: { from: number; reason: string } } {
    this.setOwned(exchange, ticker, true);
    const result = this.buffer.of(exchange, ticker).handBack(this, now);
    this.buffer.drop(exchange, ticker);
    return result;
  }

  isOwned(exchange: ExchangeKey, ticker: string): boolean {
    return this.owned.get(exchange)?.has(ticker) ?? false;
  }

  /** The end of an owned ticker's rows, moved past a book row at `ts` (undefined: not owned). */
  private book(exchange: ExchangeKey, ticker: string, ts: number): ProducedEnd | undefined {
    const end = this.owned.get(exchange)?.get(ticker);
    if (end !== undefined && ts > end.lastTs) {
      end.lastTs = ts;
      end.deltasAtLast = [];
    }
    return end;
  }

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
    const end = this.book(exchange, ticker, ts);
    if (end === undefined) {
      this.buffer.delta(exchange, ticker, ts, sequence, side, price, quantityDelta, receivedTs, venueSeq);
      return;
    }
    if (ts === end.lastTs) end.deltasAtLast.push({ side, price, quantityDelta, sequence });
    if (sequence > end.sequence) end.sequence = sequence;
    this.owner.delta(exchange, ticker, ts, sequence, side, price, quantityDelta, receivedTs, venueSeq);
  }

  snapshot(
    exchange: ExchangeKey,
    ticker: string,
    ts: number,
    book: LocalBook,
    receivedTs: number,
    venueSeq: string,
  ): void {
    const end = this.book(exchange, ticker, ts);
    (end === undefined ? this.buffer : this.owner).snapshot(exchange, ticker, ts, book, receivedTs, venueSeq);
  }

  trade(trade: RecordedTrade): void {
    const end = this.owned.get(trade.exchange)?.get(trade.ticker);
    if (end === undefined) {
      // A trade of the time before we handed the ticker over (a REST backfill, a late message): ours to write — the
      // new owner's buffer may no longer hold it, and copies are read once by id.
      const handedAt = this.handed.get(trade.exchange)?.get(trade.ticker);
      if (handedAt !== undefined && trade.ts < handedAt) this.owner.trade(trade);
      else this.buffer.trade(trade);
      return;
    }
    if (trade.ts > end.lastTradeTs) end.lastTradeTs = trade.ts;
    if (trade.sequence > end.sequence) end.sequence = trade.sequence;
    this.owner.trade(trade);
  }

  gap(
    exchange: ExchangeKey,
    ticker: string,
    fromTs: number,
    toTs: number,
    reason: string,
    detectedAt: number,
    stream?: GapStream,
  ): void {
    // A book gap ends where its closing snapshot sits (the landed end counts its to_ts too); a trades gap is no book row.
    const end = stream === 'trades' ? this.owned.get(exchange)?.get(ticker) : this.book(exchange, ticker, toTs);
    (end === undefined ? this.buffer : this.owner).gap(exchange, ticker, fromTs, toTs, reason, detectedAt, stream);
  }

  verification(
    exchange: ExchangeKey,
    ticker: string,
    ts: number,
    method: VerificationMethod,
    detectedAt: number,
  ): void {
    (this.isOwned(exchange, ticker) ? this.owner : this.buffer).verification(exchange, ticker, ts, method, detectedAt);
  }

  /** A loss marks the standby's book unknown; an owned ticker's loss goes to the controller (TickerEnv.onLost). */
  lost(exchange: ExchangeKey, ticker: string, fromTs: number, reason: GapReason): void {
    if (!this.isOwned(exchange, ticker)) this.buffer.lost(exchange, ticker, fromTs, reason);
  }
}
