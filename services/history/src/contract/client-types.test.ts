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
  type CallerWindow as ClientCallerWindow,
  type Coverage as ClientCoverage,
  type DeltaRow as ClientDeltaRow,
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
} from '@depthgate/client';
import type { errorBodySchema } from '@depthgate/service-kit';
import {
  type Book,
  type CallerWindow,
  type Coverage,
  DeltaLine,
  type DeltaPage,
  type DeltaRow,
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
const _snapshotLine: Same<Out<typeof SnapshotLine>, StreamLine<'snapshot'>> = true;
// Deltas with include=trades (issue 23) carry trade lines, trades' gap markers and a trades_gaps array the client does
// not read yet (its trades(), bars() and events() come with issue 23's client work, which mirrors TradeRow,
// TradeLine, TradesGapLine, Bar and the pages): until then every delta line and page the client knows is one the
// contract allows, and the contract allows more.
const _deltaLine: Accepts<Out<typeof DeltaLine>, StreamLine<'delta'>> = true;
const _deltaLineLooser: Same<Out<typeof DeltaLine>, StreamLine<'delta'>> = false;
// JSON pages, the book at a moment, a level, the caller's window, exactly.
const _snapshotPage: Same<Out<typeof SnapshotPage>, Page<ClientSnapshotRow>> = true;
const _deltaPage: Accepts<Out<typeof DeltaPage>, Page<ClientDeltaRow>> = true;
const _book: Same<Out<typeof Book>, ServiceBook> = true;
const _level: Same<Out<typeof Level>, ClientLevel> = true;
const _callerWindow: Same<Out<typeof CallerWindow>, ClientCallerWindow> = true;
// Coverage: the client reads one KindCoverage for both kinds (`books` optional) and takes `window` as optional (a
// service older than the field leaves it out); the contract is exact per kind and always gives the window.
const _kindCoverage: Accepts<ClientKindCoverage, Out<typeof KindCoverage>> = true;
const _snapshotCoverage: Accepts<ClientKindCoverage, Out<typeof SnapshotCoverage>> = true;
const _coverage: Accepts<ClientCoverage, Out<typeof Coverage>> = true;
const _coverageLooser: Same<Out<typeof Coverage>, ClientCoverage> = false;
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
    { type: 'end', count: 2, next_cursor: 'AQIB-_' },
  ],
};

describe('@depthgate/client against the contract', () => {
  it.each(['snapshot', 'delta'] as const)('parses every kind of %s line to what the line schema accepts', (kind) => {
    const schema = kind === 'snapshot' ? SnapshotLine : DeltaLine;
    for (const [i, value] of LINES[kind].entries()) {
      const line = JSON.stringify(value);
      const parsed = parseLine(kind, line, { line: i + 1 });
      expect(parsed).toEqual(value);
      expect(schema.parse(parsed)).toEqual(value);
    }
  });
});
