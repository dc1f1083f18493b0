import { BookError, DataError, HttpError, TransportError } from '@depthgate/client';
import { describeProblem, windowText } from './messages';

const http = (status: number, error: string, message: string, retryAfterMs?: number) =>
  new HttpError({
    status,
    error,
    json: { error, message },
    message,
    requestId: 'r-1',
    url: 'GET /x',
    retryAfterMs,
    body: '',
  });
const where = { exchange: 'venue_b' as const, ticker: 'KXA', origin: 'http://h:7081' };

describe('problems as sentences', () => {
  it('a refused key, an unknown ticker, the rate limit, the service away', () => {
    expect(
      describeProblem(http(401, 'unauthorized', 'Invalid API key'), { ...where, step: 'tickers', keyed: true }),
    ).toMatchObject({
      kind: 'key',
      retry: false,
      text: expect.stringContaining('refused your API key: it is unknown or has been revoked'),
    });
    const unknown = describeProblem(http(404, 'unknown_ticker', 'x'), { ...where, step: 'coverage', keyed: true });
    expect(unknown.text).toMatch(/^Unknown ticker "KXA" on venue_b: .*ticker_prefixes/);
    const limited = describeProblem(http(429, 'rate_limited', 'x', 12_000), { ...where, step: 'book', keyed: false });
    expect(limited).toMatchObject({ kind: 'rate_limited', retry: true });
    expect(limited.text).toContain('Try again in 12 s. Anonymous callers share a small budget');
    expect(
      describeProblem(http(503, 'service_unavailable', 'store away'), { ...where, step: 'book', keyed: false }).text,
    ).toBe(
      'The history service could not answer the book right now (503 service_unavailable: store away). (request id r-1)',
    );
    const down = new TransportError('network_error', 'ECONNREFUSED', 'GET /x', undefined);
    expect(describeProblem(down, { ...where, step: 'changes', keyed: false })).toMatchObject({
      kind: 'unavailable',
      retry: true,
      text: 'Cannot reach the history service at http://h:7081 for the changes: it is down or restarting, or the network is. Retry when it is back.',
    });
    const cut = new DataError('stream_cut', 'the JSON body ends early');
    expect(describeProblem(cut, { ...where, step: 'book', keyed: false }).text).toContain('(stream_cut)');
    // The chart's book, rebuilt in the page: what stopped it is named.
    const mismatch = new BookError('snapshot_mismatch', 'the replayed book differs from the recorded snapshot', {});
    expect(describeProblem(mismatch, { ...where, step: 'prices', keyed: false })).toEqual({
      kind: 'data',
      retry: false,
      text: 'The book for the prices and trades could not be rebuilt in your window (snapshot_mismatch): the replayed book differs from the recorded snapshot',
    });
  });
});

describe('the window, explained', () => {
  it('names the rule and what follows from it', () => {
    const start = '2026-11-22T12:00:00.000Z';
    expect(windowText({ start_ts: start, rule: 'anonymous', days: 1 }, 'KXA')).toBe(
      'Your window for KXA starts 2026-11-22 12:00:00.000 UTC: anonymous callers see the last day. Older data is not shown; an API key with a longer window shows it.',
    );
    expect(windowText({ start_ts: start, rule: 'max_data_age_days', days: 30 }, 'KXA')).toContain(
      'your key sees the last 30 days (its max_data_age_days)',
    );
    expect(windowText({ start_ts: start, rule: 'full_history_prefix', days: null }, 'KXA')).toContain(
      'full_history_prefixes',
    );
    expect(windowText({ start_ts: start, rule: 'full_history', days: null }, 'KXA')).toContain('all recorded history');
  });
});
