import { formatHash, parseHash } from './state';

describe('the view in the address', () => {
  it('reads exchange, ticker, moment and depth, and writes them back the same', () => {
    const { state, problems } = parseHash('#/venue_b/KXBTCD-26MAR07-T100000?at=2026-11-22T11:00:00.000Z&depth=5');
    expect(problems).toEqual([]);
    expect(state).toEqual({
      exchange: 'venue_b',
      ticker: 'KXBTCD-26MAR07-T100000',
      at: Date.UTC(2026, 10, 22, 11),
      depth: 5,
    });
    expect(formatHash(state)).toBe('#/venue_b/KXBTCD-26MAR07-T100000?at=2026-11-22T11%3A00%3A00.000Z&depth=5');
    expect(parseHash(formatHash(state)).state).toEqual(state);
    expect(formatHash({ ...state, depth: null })).toMatch(/depth=all$/);
    expect(formatHash({ ...state, depth: 10 })).not.toMatch(/depth/);
  });

  it('takes aliases and any case for the exchange; empty is the default view', () => {
    expect(parseHash('#/Gemini/BTCUSD').state).toMatchObject({ exchange: 'venue_c', ticker: 'BTCUSD' });
    expect(parseHash('#/polymarket_us').state.exchange).toBe('venue_a_us');
    expect(parseHash('').state).toEqual({ exchange: 'venue_b', depth: 10 });
    expect(parseHash('#/').problems).toEqual([]);
  });

  it('reads `at=` as the API reads a timestamp: RFC 3339 or 13-digit epoch milliseconds, written back as RFC 3339', () => {
    const ms = Date.UTC(2026, 10, 22, 11, 0, 0, 123);
    const fromEpoch = parseHash(`#/venue_b/X?at=${ms}`);
    expect(fromEpoch.problems).toEqual([]);
    expect(fromEpoch.state.at).toBe(ms);
    expect(parseHash('#/venue_b/X?at=2026-11-22T12:00:00.123%2B01:00').state.at).toBe(ms);
    expect(decodeURIComponent(formatHash(fromEpoch.state))).toBe('#/venue_b/X?at=2026-11-22T11:00:00.123Z');
  });

  it('says what it could not read instead of showing something else', () => {
    // In the history service's words (its 404 unknown_exchange): every key with the real names it also takes.
    expect(parseHash('#/nyse/IBM').problems).toEqual([
      'Unknown exchange "nyse" in the address: use venue_b (kalshi), venue_c (gemini), venue_a_us (polymarket_us, polymarket-us), venue_a_clob (polymarket, polymarket_clob, polymarket-clob), venue_d (coinbase).',
    ]);
    expect(parseHash('#/venue-b/X').problems).toEqual([
      'Unknown exchange "venue-b" in the address ("-" spells the gateway\'s platform keys; the history\'s exchange keys use "_": venue_b): use venue_b (kalshi), venue_c (gemini), venue_a_us (polymarket_us, polymarket-us), venue_a_clob (polymarket, polymarket_clob, polymarket-clob), venue_d (coinbase).',
    ]);
    expect(parseHash('#/venue_b/bad ticker!').problems[0]).toMatch(/is not a ticker/);
    expect(parseHash('#/venue_b/X?at=yesterday').problems).toEqual([
      '"yesterday" in the address is not a time (RFC 3339, or 13-digit epoch milliseconds).',
    ]);
    expect(parseHash('#/venue_b/X?at=2026-02-30T00:00:00Z').problems).toHaveLength(1);
    // Epoch seconds (10 digits) are not a moment, as at the API.
    expect(parseHash('#/venue_b/X?at=1795000000').problems).toHaveLength(1);
    expect(parseHash('#/venue_b/X?depth=7').problems).toEqual(['depth=7 in the address: use 5, 10, 25, 50 or all.']);
    expect(parseHash('#/venue_b/X/more').problems).toEqual([
      'The address has more after the ticker than this page reads.',
    ]);
    expect(parseHash('#/venue_b/%E0%A4%A').problems[0]).toMatch(/is not a ticker/);
  });

  it('takes tickers of up to 128 characters (a Polymarket CLOB token id has 77 digits), not 129', () => {
    const tokenId = '71321045679252212594626385532706912750332728571942532289631379312455583992563';
    expect(parseHash(`#/venue_b/${tokenId}`).state.ticker).toBe(tokenId);
    expect(parseHash(`#/venue_b/${'x'.repeat(128)}`).state.ticker).toBe('x'.repeat(128));
    const long = parseHash(`#/venue_b/${'x'.repeat(129)}`);
    expect(long.state.ticker).toBeUndefined();
    expect(long.problems[0]).toMatch(/is not a ticker/);
  });
});
