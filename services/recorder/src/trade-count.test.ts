import { parseDecimal } from '@depthgate/feeds';
import { TradeCountAudit, type TradeCountCheck } from './trade-count';

/** A feed in the venue's order: a book message (its cumulative count), then the trades of its change. */
type Step = { book: string; ts: number } | { trade: string };

function run(audit: TradeCountAudit, steps: Step[]): TradeCountCheck[] {
  const checks: TradeCountCheck[] = [];
  for (const s of steps) {
    if ('trade' in s) audit.trade(parseDecimal(s.trade));
    else checks.push(audit.book(parseDecimal(s.book), s.ts));
  }
  return checks;
}

describe('TradeCountAudit', () => {
  it('holds while every counted trade arrives, in exact decimals (0.1 + 0.2 is 0.3)', () => {
    const checks = run(new TradeCountAudit(), [
      { book: '1000.50', ts: 100 }, // the subscription's snapshot: everything before it counted
      { book: '1000.60', ts: 200 },
      { trade: '0.1' },
      { book: '1000.80', ts: 300 },
      { trade: '0.2' },
      { book: '1000.80', ts: 400 }, // a change without a trade
      { book: '1001.3', ts: 500 },
      { trade: '0.25' },
      { trade: '0.25' },
      { book: '1001.30', ts: 600 },
    ]);
    expect(checks.map((c) => c.kind)).toEqual(['baseline', 'held', 'held', 'held', 'held', 'held']);
  });

  it('finds a lost trade at the next book: one gap from the last book that held to the book that counted it', () => {
    const audit = new TradeCountAudit();
    const checks = run(audit, [
      { book: '5', ts: 100 },
      { book: '7', ts: 200 },
      { trade: '2' },
      { book: '10', ts: 300 }, // holds: the 2 counted at 200 arrived
      // its trade of 3 is lost
      { book: '11', ts: 400 }, // 3 counted at 300 never arrived
      { trade: '1' },
      { book: '11.5', ts: 500 },
      { trade: '0.5' },
      { book: '11.5', ts: 600 },
    ]);
    expect(checks).toEqual([
      { kind: 'baseline' },
      { kind: 'held' },
      { kind: 'held' },
      { kind: 'missed', from: 200, to: 300, quantity: parseDecimal('3') },
      { kind: 'held' },
      { kind: 'held' },
    ]);
  });

  it('takes part of a change lost as lost, and several changes lost in a row as one gap', () => {
    const audit = new TradeCountAudit();
    expect(
      run(audit, [
        { book: '0', ts: 10 },
        { book: '2', ts: 20 },
        { trade: '1' }, // of two trades of 1, one arrives
        { book: '2', ts: 30 },
      ]).at(-1),
    ).toEqual({ kind: 'missed', from: 10, to: 20, quantity: parseDecimal('1') });
    // Book, lost trade, book (with a lost trade), book: the first check finds the loss, the next the second one.
    expect(
      run(audit, [
        { book: '3', ts: 40 }, // counted at 30: nothing; its trade of 1 lost
        { book: '4', ts: 50 }, // counted at 40: 1 missing
        { trade: '1' },
        { book: '4', ts: 60 },
      ]),
    ).toEqual([{ kind: 'held' }, { kind: 'missed', from: 30, to: 40, quantity: parseDecimal('1') }, { kind: 'held' }]);
  });

  it('waits for the next book when a book message is lost (its change counted only there): no gap', () => {
    const checks = run(new TradeCountAudit(), [
      { book: '10', ts: 100 },
      { book: '12', ts: 200 },
      { trade: '2' },
      // the book at 300 (count 15) is lost; its trade of 3 arrives
      { trade: '3' },
      { book: '16', ts: 400 },
      { trade: '1' },
      { book: '16', ts: 500 },
    ]);
    expect(checks.map((c) => c.kind)).toEqual(['baseline', 'held', 'held', 'held']);
  });

  it('a lost book and a lost trade: the gap reaches back to the last book that held', () => {
    const checks = run(new TradeCountAudit(), [
      { book: '10', ts: 100 },
      { book: '12', ts: 200 },
      { trade: '2' },
      // the book at 300 (count 15) is lost, and its trade of 3
      { book: '16', ts: 400 }, // at least 2 due (counted at 200): held
      { trade: '1' },
      { book: '16', ts: 500 }, // 6 due since 10, 3 received
    ]);
    expect(checks.at(-1)).toEqual({ kind: 'missed', from: 200, to: 400, quantity: parseDecimal('3') });
  });

  it('starts again from the next count after a reset (a reconnect): trades and counts missed meanwhile are no gap', () => {
    const audit = new TradeCountAudit();
    run(audit, [{ book: '10', ts: 100 }, { book: '12', ts: 200 }, { trade: '2' }]);
    audit.reset();
    audit.trade(parseDecimal('4')); // before the new subscription's snapshot
    const checks = run(audit, [
      { book: '30', ts: 900 },
      { book: '31', ts: 1000 },
      { trade: '1' },
      { book: '31', ts: 1100 },
    ]);
    expect(checks.map((c) => c.kind)).toEqual(['baseline', 'held', 'held']);
  });

  it('reports more trades than counted, or a count going back, and starts again from there', () => {
    const audit = new TradeCountAudit();
    expect(
      run(audit, [{ book: '1', ts: 1 }, { book: '2', ts: 2 }, { trade: '1' }, { trade: '5' }, { book: '3', ts: 3 }]).at(
        -1,
      ),
    ).toEqual({
      kind: 'excess',
      quantity: parseDecimal('4'),
    });
    // Measured from the book at 2 again: the trade of 1 counted at 3 arrives, and the audit holds.
    expect(run(audit, [{ trade: '1' }, { book: '3', ts: 4 }])).toEqual([{ kind: 'held' }]);
    expect(run(audit, [{ book: '0.5', ts: 5 }, { book: '1', ts: 6 }, { trade: '0.5' }, { book: '1', ts: 7 }])).toEqual([
      { kind: 'restarted' },
      { kind: 'held' },
      { kind: 'held' },
    ]);
  });
});
