import { snippets } from './snippets';

const base = {
  origin: 'http://127.0.0.1:7081',
  exchange: 'venue_b' as const,
  ticker: 'KXBTCD-26MAR07-T100000',
  at: Date.UTC(2026, 10, 22, 11, 0, 0, 5),
};

describe('snippets', () => {
  it('curl lines for what is shown, quoted for the shell, without a key', () => {
    const [book, coverage, deltas, stream, trades, code] = snippets({ ...base, depth: 10, keyed: false });
    expect(book?.code).toBe(
      "curl -s --compressed 'http://127.0.0.1:7081/api/venue_b/book/KXBTCD-26MAR07-T100000?at=2026-11-22T11%3A00%3A00.005Z&depth=10'",
    );
    expect(coverage?.code).toBe(
      "curl -s --compressed 'http://127.0.0.1:7081/api/venue_b/coverage/KXBTCD-26MAR07-T100000'",
    );
    // The changes after the moment start a millisecond later (the book at T includes the changes at T).
    expect(deltas?.code).toContain('start_ts=2026-11-22T11%3A00%3A00.006Z&limit=100&fields=received_ts');
    expect(stream?.code).toContain('format=ndjson&include=gaps');
    expect(trades?.code).toBe(
      "curl -s --compressed 'http://127.0.0.1:7081/api/venue_b/trades/KXBTCD-26MAR07-T100000?start_ts=2026-11-22T11%3A00%3A00.006Z&end_ts=2026-11-22T11%3A01%3A00.005Z&format=ndjson'",
    );
    expect(code?.code).toContain(
      "client.events('venue_b', 'KXBTCD-26MAR07-T100000', { from: '2026-11-22T11:00:00.006Z', to: '2026-11-22T11:01:00.005Z' })",
    );
    expect(code?.code).toContain(
      "client.book('venue_b', 'KXBTCD-26MAR07-T100000', { at: '2026-11-22T11:00:00.005Z', depth: 10 })",
    );
    expect(code?.code).not.toContain('apiKey');
  });

  it('with a key: the variable, never the key; depth all leaves depth out', () => {
    const all = snippets({ ...base, depth: null, keyed: true });
    expect(all[0]?.code).toBe(
      `curl -s --compressed -H "x-api-key: $DEPTHGATE_API_KEY" 'http://127.0.0.1:7081/api/venue_b/book/KXBTCD-26MAR07-T100000?at=2026-11-22T11%3A00%3A00.005Z'`,
    );
    expect(all[5]?.code).toContain('apiKey: process.env.DEPTHGATE_API_KEY');
    expect(all.every((s) => !s.code.includes('dg_'))).toBe(true);
  });
});
