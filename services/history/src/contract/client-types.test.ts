/**
 * @depthgate/client's types against the contract's schemas. The client is published and imports nothing (not zod,
 * not this service), so its types are written there and checked here: at compile time (`pnpm run typecheck`
 * compiles this file: a type that drifts from its schema makes one of the constants below a type error, `true` not
 * being assignable to `false`), and at run time the client's line parser turns the lines of every kind into values
 * the schemas accept.
 *
 * Mutual assignability (`Same`) wherever the client states the wire exactly. One-way (`Accepts`: every answer the
 * schema allows is a value of the client's type) where the client is deliberately looser, each with its reason.
 */
import type * as z from 'zod';
import {
  parseLine,
  type Bar as ClientBar,
  type BarPage as ClientBarPage,
  type CallerWindow as ClientCallerWindow,
  type Coverage as ClientCoverage,
  type DeltaPage as ClientDeltaPage,
  type DeltaRow as ClientDeltaRow,
  type DigestLine as ClientDigestLine,
  type EndLine as ClientEndLine,
  type Gap as ClientGap,
  type GapMarker as ClientGapMarker,
  type HistoryClient,
  type HttpError,
  type KindCoverage as ClientKindCoverage,
  type Level as ClientLevel,
  type Page,
  type ServiceBook,
  type SnapshotRow as ClientSnapshotRow,
  type StreamLine,
  type TradeLine as ClientTradeLine,
  type TradeRow as ClientTradeRow,
  type TradesGapMarker as ClientTradesGapMarker,
  type VerificationCoverage as ClientVerificationCoverage,
  type BookVerified as ClientBookVerified,
} from '@depthgate/client';
import type { errorBodySchema } from '@depthgate/service-kit';
import {
  type Bar,
  type BarPage,
  type Book,
  type CallerWindow,
  type Coverage,
  DeltaLine,
  type DeltaPage,
  type DeltaRow,
  type DigestLine,
  type EndLine,
  type Gap,
  type GapLine,
  type KindCoverage,
  type Level,
  type SnapshotCoverage,
  SnapshotLine,
  type SnapshotPage,
  type SnapshotRow,
  type TickerList,
  type TradeLine,
  TradeLines,
  type TradePage,
  type TradeRow,
  type TradesGapLine,
  type VerificationCoverage,
  type Verified,
} from './bodies';

/** A and B are assignable to each other. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Every A is a B. */
type Accepts<B, A> = [A] extends [B] ? true : false;
type Out<S extends z.ZodType> = z.output<S>;

// The rows, gaps and lines of every format, exactly.
const _snapshotRow: Same<Out<typeof SnapshotRow>, ClientSnapshotRow> = true;
const _deltaRow: Same<Out<typeof DeltaRow>, ClientDeltaRow> = true;
const _gap: Same<Out<typeof Gap>, ClientGap> = true;
const _gapLine: Same<Out<typeof GapLine>, ClientGapMarker> = true;
const _endLine: Same<Out<typeof EndLine>, ClientEndLine> = true;
const _digestLine: Same<Out<typeof DigestLine>, ClientDigestLine> = true;
// (The snapshots' lines with format=digest are DigestLines, which the replay reads apart.)
const _snapshotLine: Same<Out<typeof SnapshotLine>, StreamLine<'snapshot'> | ClientDigestLine> = true;
// Trades, bars, and the lines deltas carry with include=trades (a trade, a gap of the trades), exactly.
const _tradeRow: Same<Out<typeof TradeRow>, ClientTradeRow> = true;
const _tradeLine: Same<Out<typeof TradeLine>, ClientTradeLine> = true;
const _tradesGapLine: Same<Out<typeof TradesGapLine>, ClientTradesGapMarker> = true;
const _bar: Same<Out<typeof Bar>, ClientBar> = true;
const _deltaLine: Same<Out<typeof DeltaLine>, StreamLine<'delta'>> = true;
const _tradeLines: Same<Out<typeof TradeLines>, StreamLine<'trade'>> = true;
// JSON pages, the book at a moment, a level, the caller's window, exactly.
const _snapshotPage: Same<Out<typeof SnapshotPage>, Page<ClientSnapshotRow>> = true;
const _deltaPage: Same<Out<typeof DeltaPage>, ClientDeltaPage> = true;
const _tradePage: Same<Out<typeof TradePage>, Page<ClientTradeRow>> = true;
const _barPage: Same<Out<typeof BarPage>, ClientBarPage> = true;
// What the client's calls return is the contract's page (deltaPage without trades: a page of delta rows only).
const _deltaPageCall: Same<Awaited<ReturnType<HistoryClient['tradePage']>>, Page<ClientTradeRow>> = true;
const _barPageCall: Same<Awaited<ReturnType<HistoryClient['barPage']>>, ClientBarPage> = true;
const _plainDeltaPage: Accepts<Out<typeof DeltaPage>, Page<ClientDeltaRow>> = true;
const _book: Same<Out<typeof Book>, ServiceBook> = true;
const _level: Same<Out<typeof Level>, ClientLevel> = true;
const _callerWindow: Same<Out<typeof CallerWindow>, ClientCallerWindow> = true;
// Coverage: the client reads one KindCoverage for both kinds (`books` optional) and takes `window` as optional (a
// service older than the field leaves it out); the contract is exact per kind and always gives the window.
const _kindCoverage: Accepts<ClientKindCoverage, Out<typeof KindCoverage>> = true;
const _snapshotCoverage: Accepts<ClientKindCoverage, Out<typeof SnapshotCoverage>> = true;
const _coverage: Accepts<ClientCoverage, Out<typeof Coverage>> = true;
const _coverageLooser: Same<Out<typeof Coverage>, ClientCoverage> = false;
const _verificationCoverage: Same<Out<typeof VerificationCoverage>, ClientVerificationCoverage> = true;
const _verified: Same<Out<typeof Verified>, ClientBookVerified> = true;
// tickers() gives the answer's list; an error answer's code is HttpError.error.
const _tickers: Same<Out<typeof TickerList>['tickers'], Awaited<ReturnType<HistoryClient['tickers']>>> = true;
const _errorCode: Accepts<NonNullable<HttpError['error']>, Out<ReturnType<typeof errorBodySchema>>['error']> = true;

const TS = '2026-03-26T14:00:01.193Z';
const LINES = {
  snapshot: [
    { ts: TS, side: 'bid', price: '0.48', quantity: '150' },
    { ts: TS, side: 'ask', price: '0.5', quantity: '20.25', received_ts: TS },
    { type: 'gap', from_ts: TS, to_ts: TS, reason: 'stall', detected_at: TS },
    { type: 'end', count: 2, next_cursor: null },
  ],
  delta: [
    { ts: TS, sequence: 1795433671497000, side: 'bid', price: '0.46', quantity_delta: '-1955.15' },
    { ts: TS, sequence: 0, side: 'ask', price: '1', quantity_delta: '3', received_ts: TS },
    { type: 'trade', ts: TS, trade_id: 'd91bc706-ee49-470d-82d8-11418bda6fed', price: '0.55', size: '20', side: 'buy' },
    { type: 'trade', ts: TS, trade_id: 'id,"7"', price: '0.5', size: '1.5', side: 'sell', received_ts: TS },
    { type: 'gap', from_ts: TS, to_ts: TS, reason: 'stall', detected_at: TS },
    { type: 'trades_gap', from_ts: TS, to_ts: TS, reason: 'disconnect', detected_at: TS },
    { type: 'end', count: 4, next_cursor: 'AQIB-_' },
  ],
  trade: [
    { ts: TS, trade_id: 'h:00000000000000a1', price: '0.55', size: '20', side: 'buy' },
    {
      ts: TS,
      trade_id: '5e6a1f52',
      price: '0.54',
      size: '3',
      side: 'sell',
      received_ts: TS,
      venue_side: 'no',
      sequence: 1795433641692001,
    },
    { type: 'gap', from_ts: TS, to_ts: TS, reason: 'disconnect', detected_at: TS },
    { type: 'end', count: 2, next_cursor: null },
  ],
};
const SCHEMAS = { snapshot: SnapshotLine, delta: DeltaLine, trade: TradeLines };

describe('@depthgate/client against the contract', () => {
  it.each(['snapshot', 'delta', 'trade'] as const)(
    'parses every kind of %s line to what the line schema accepts',
    (kind) => {
      const schema = SCHEMAS[kind];
      for (const [i, value] of LINES[kind].entries()) {
        const line = JSON.stringify(value);
        const parsed = parseLine(kind, line, { line: i + 1 });
        expect(parsed).toEqual(value);
        expect(schema.parse(parsed)).toEqual(value);
      }
    },
  );
});
