import { QueryScope } from '@depthgate/history-store';
import { ReplayDataError } from './engine';
import { closeFor, readFailure } from './read-failure';

const scope = () => new QueryScope(async () => undefined, 60_000);
const aborted = (reason: 'timeout' | 'cancelled') => {
  const s = scope();
  s.abort(reason);
  s.dispose();
  return s;
};
const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' });

describe('readFailure and closeFor: one meaning of a failed read for HTTP and WebSocket', () => {
  it.each([
    {
      what: 'the scope ran over its budget',
      err: new Error('aborted'),
      s: aborted('timeout'),
      kind: 'timeout',
      code: 1013,
    },
    {
      what: "ClickHouse's max_execution_time",
      err: new Error('Code: 159, e.displayText() = DB::Exception: Timeout exceeded'),
      s: scope(),
      kind: 'timeout',
      code: 1013,
    },
    { what: 'ClickHouse refused the connection', err: refused, s: scope(), kind: 'unavailable', code: 1013 },
    {
      what: 'ClickHouse killed the query',
      err: new Error('Code: 394, e.displayText() = DB::Exception: Query was cancelled'),
      s: scope(),
      kind: 'unavailable',
      code: 1013,
    },
    {
      what: 'rows that cannot be replayed',
      err: new ReplayDataError('a delta before any book'),
      s: scope(),
      kind: 'data',
      code: 1011,
    },
    {
      what: 'a syntax error',
      err: new Error('Code: 62, e.displayText() = DB::Exception: Syntax error'),
      s: scope(),
      kind: 'error',
      code: 1011,
    },
  ])('$what → $kind, close $code', ({ err, s, kind, code }) => {
    const failure = readFailure(err, s);
    expect(failure.kind).toBe(kind);
    const close = closeFor(failure, 'reading the window');
    expect(close.code).toBe(code);
    // A close frame's reason is at most 123 bytes.
    expect(Buffer.byteLength(close.reason)).toBeLessThanOrEqual(123);
  });

  it('a budget names the read that ran over it and says to try again; ClickHouse down says so', () => {
    expect(closeFor(readFailure(new Error('aborted'), aborted('timeout')), 'resolving the markets')).toEqual({
      code: 1013,
      reason: 'resolving the markets ran over its time budget; try again later',
    });
    expect(closeFor(readFailure(refused, undefined), 'reading the window')).toEqual({
      code: 1013,
      reason: 'the history store is unavailable; try again later',
    });
  });

  it('a caller that went away is cancelled, whatever the error says', () => {
    expect(readFailure(new Error('Code: 159, Timeout exceeded'), aborted('cancelled')).kind).toBe('cancelled');
    expect(readFailure(refused, aborted('cancelled')).kind).toBe('cancelled');
  });

  it("keeps ClickHouse's error code for the log", () => {
    expect(readFailure(new Error('Code: 62, e.displayText() = DB::Exception: Syntax error'), scope())).toMatchObject({
      kind: 'error',
      code: 62,
    });
  });
});
