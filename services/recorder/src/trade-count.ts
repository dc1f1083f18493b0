/**
 * The trade count audit (docs/history-internals.md, "Recorder", "Trades"): where a venue's book messages carry the market's
 * cumulative traded quantity (Polymarket US `stats.sharesTraded`), the trades a feed received are checked against it,
 * so a trade message lost silently (no trade id sequence, no REST history to read it back from) becomes a trades gap.
 *
 * The venue's order, which the audit relies on: a book message counts every trade up to its change, and the trade
 * messages of that change follow it. So when book k+1 arrives, every trade of the changes up to book k has arrived:
 * the trades received since the baseline add up to at least count(k) − count(baseline) (less: some were lost, of the
 * changes since the last check that held) and at most count(k+1) − count(baseline) (more: impossible, counted and
 * re-baselined). Between the two is normal: a lost book message leaves its change's trades counted only by the next.
 * The baseline is the first count after `reset` (a new subscription: the venue's snapshot, which counts every trade
 * sent before it); after a loss or an excess the audit re-baselines on the previous book, so one loss gives one gap.
 * Quantities are scaled integers (exact decimals).
 */

/** What one book message's count says. */
export type TradeCountCheck =
  /** The first count since a reset: the audit starts from it. */
  | { kind: 'baseline' }
  /** Every trade the previous book counts has arrived. */
  | { kind: 'held' }
  /**
   * `quantity` of the trades the previous book counts never arrived: trades of the changes between the book of the last
   * check that held (`from`, its ts) and the previous book (`to`, its ts), bounds inclusive.
   */
  | { kind: 'missed'; from: number; to: number; quantity: bigint }
  /** More arrived than this book counts (`quantity` beyond it), or the count went back (`restarted`). */
  | { kind: 'excess'; quantity: bigint }
  | { kind: 'restarted' };

export class TradeCountAudit {
  /** The count the trades received are measured from; undefined: waiting for a baseline. */
  private base: bigint | undefined;
  /** Quantity of the trades received since the baseline. */
  private received = 0n;
  /** The previous book's count and ts. */
  private prevCount = 0n;
  private prevTs = -1;
  /** ts of the book up to whose change every counted trade has arrived. */
  private heldTs = -1;

  /** The feed stopped (a disconnect, a stall, a resubscription): the next count is a new baseline. */
  reset(): void {
    this.base = undefined;
    this.received = 0n;
  }

  /** A trade the feed brought, of `size` (scaled). */
  trade(size: bigint): void {
    if (this.base !== undefined) this.received += size;
  }

  /** A book message at `ts` whose venue counts `count` (scaled) traded since some start of its own. */
  book(count: bigint, ts: number): TradeCountCheck {
    if (this.base === undefined || count < this.prevCount) {
      const restarted = this.base !== undefined;
      this.base = count;
      this.received = 0n;
      this.prevCount = count;
      this.prevTs = ts;
      this.heldTs = ts;
      return restarted ? { kind: 'restarted' } : { kind: 'baseline' };
    }
    const due = this.prevCount - this.base;
    const bound = count - this.base;
    let check: TradeCountCheck;
    if (this.received < due) {
      check = {
        kind: 'missed',
        from: Math.min(this.heldTs, this.prevTs),
        to: this.prevTs,
        quantity: due - this.received,
      };
    } else if (this.received > bound) check = { kind: 'excess', quantity: this.received - bound };
    else check = { kind: 'held' };
    if (check.kind !== 'held') {
      // Start again from the previous book: the trades that follow this one are not in its count.
      this.base = this.prevCount;
      this.received = 0n;
    }
    this.heldTs = this.prevTs;
    this.prevCount = count;
    this.prevTs = ts;
    return check;
  }
}
