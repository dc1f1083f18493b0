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

export class RoutingSink implements RowSink {
  /** Owned tickers per exchange (a ticker is the standby's until set owned). */
  private readonly owned = new Map<ExchangeKey, Set<string>>();

  constructor(
    private readonly owner: RowSink,
    private readonly buffer: StandbyBuffer,
  ) {}

  /** Routes the ticker's next rows to the writer (`owned`) or to the standby buffer. */
  setOwned(exchange: ExchangeKey, ticker: string, owned: boolean): void {
    let set = this.owned.get(exchange);
    if (set === undefined) {
      set = new Set();
      this.owned.set(exchange, set);
    }
    if (owned) set.add(ticker);
    else set.delete(ticker);
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
    const result = this.buffer.of(exchange, ticker).handBack(this.owner, now);
    this.buffer.drop(exchange, ticker);
    this.setOwned(exchange, ticker, true);
    return result;
  }

  isOwned(exchange: ExchangeKey, ticker: string): boolean {
    return this.owned.get(exchange)?.has(ticker) ?? false;
  }

  private to(exchange: ExchangeKey, ticker: string): RowSink {
    return this.owned.get(exchange)?.has(ticker) === true ? this.owner : this.buffer;
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
    this.to(exchange, ticker).delta(exchange, ticker, ts, sequence, side, price, quantityDelta, receivedTs, venueSeq);
  }

  snapshot(
    exchange: ExchangeKey,
    ticker: string,
    ts: number,
    book: LocalBook,
    receivedTs: number,
    venueSeq: string,
  ): void {
    this.to(exchange, ticker).snapshot(exchange, ticker, ts, book, receivedTs, venueSeq);
  }

  trade(trade: RecordedTrade): void {
    this.to(trade.exchange, trade.ticker).trade(trade);
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
    this.to(exchange, ticker).gap(exchange, ticker, fromTs, toTs, reason, detectedAt, stream);
  }

  verification(
    exchange: ExchangeKey,
    ticker: string,
    ts: number,
    method: VerificationMethod,
    detectedAt: number,
  ): void {
    this.to(exchange, ticker).verification(exchange, ticker, ts, method, detectedAt);
  }

  /** A loss marks the standby's book unknown; an owned ticker's loss goes to the controller (TickerEnv.onLost). */
  lost(exchange: ExchangeKey, ticker: string, fromTs: number, reason: GapReason): void {
    if (!this.isOwned(exchange, ticker)) this.buffer.lost(exchange, ticker, fromTs, reason);
  }
}
