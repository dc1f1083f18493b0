import { AppError } from '@depthgate/service-kit';
import { mergeByClock, replay, type RecordedWindow } from '../../engine';
import { PmUsClient } from '../../testing/clients';
import { directBook, randomWindow } from '../../testing/history';
import { VENUES } from '../../testing/venues';
import type { MarketStream, ReplayProtocol, SubscribeRequest } from '../protocol';
import { pmUsSocket } from './polymarket-us';

const grid = (VENUES.find((v) => v.exchange === 'venue_a_us') as (typeof VENUES)[number]).grid;

const sub = (requestId: unknown, subscriptionType: unknown, marketSlugs: unknown) =>
  JSON.stringify({ subscribe: { requestId, subscriptionType, marketSlugs } });
const MD = 'SUBSCRIPTION_TYPE_MARKET_DATA';
const TRADE = 'SUBSCRIPTION_TYPE_TRADE';

function request(p: ReplayProtocol, text: string): SubscribeRequest {
  const f = p.frame(text, false, false);
  if (f.kind !== 'subscribe') throw new Error(`not a subscribe: ${JSON.stringify(f)}`);
  return f.request;
}

function subscribed(p: ReplayProtocol, text: string): void {
  const r = request(p, text);
  expect(p.accept(r, r.tickers)).toEqual([]);
}

/** The one error a frame gets, parsed. */
function errorOf(p: ReplayProtocol, text: string, started = false): unknown {
  const f = p.frame(text, false, started);
  if (f.kind !== 'reply' || f.texts.length !== 1) throw new Error(`not one reply: ${JSON.stringify(f)}`);
  return JSON.parse(f.texts[0] as string);
}

const windowOf = (ticker: string) => ({
  ...randomWindow(`pm-us|${ticker}`, grid, { events: 100, gapRate: 0.05 }),
  ticker,
});

function played(p: ReplayProtocol, windows: Map<string, RecordedWindow>): string[] {
  return [...mergeByClock(p.streams().map((s) => replay(windows.get(s.ticker) as RecordedWindow, s.encoder)))].map(
    (m) => m.message.text,
  );
}

describe('Polymarket US replay protocol (the markets WebSocket)', () => {
  it('bad messages get the venue’s error form, with the requestId when there is one', () => {
    const p = pmUsSocket.create();
    const cases: [string, unknown][] = [
      ['not json', { error: 'invalid message' }],
      ['[1]', { error: 'invalid message' }],
      ['PING', { error: 'invalid message' }],
      ['{"hello":1}', { error: 'unknown message' }],
      [JSON.stringify({ subscribe: 'x' }), { error: 'unknown message' }],
      [sub(undefined, MD, ['a']), { error: 'requestId is required' }],
      [sub(7, MD, ['a']), { error: 'requestId is required' }],
      [sub('r', 'SUBSCRIPTION_TYPE_ORDERS', ['a']), { requestId: 'r', error: 'unsupported subscriptionType' }],
      [sub('r', MD, []), { requestId: 'r', error: 'marketSlugs is required' }],
      [sub('r', MD, [1, null]), { requestId: 'r', error: 'marketSlugs is required' }],
      [sub('r', MD, undefined), { requestId: 'r', error: 'marketSlugs is required' }],
      [
        sub(
          'r',
          MD,
          Array.from({ length: 101 }, (_, i) => `m${i}`),
        ),
        { requestId: 'r', error: 'too many marketSlugs (max 100)' },
      ],
      [JSON.stringify({ unsubscribe: { requestId: 'nope' } }), { requestId: 'nope', error: 'subscription not found' }],
      [JSON.stringify({ unsubscribe: { requestId: 3 } }), { error: 'subscription not found' }],
    ];
    for (const [text, expected] of cases) expect(errorOf(p, text)).toEqual(expected);
  });

  it('MARKET_DATA_LITE is refused (its fields are not recorded); a subscribe after the start is refused', () => {
    const p = pmUsSocket.create();
    expect(errorOf(p, sub('lite', 'SUBSCRIPTION_TYPE_MARKET_DATA_LITE', ['a']))).toEqual({
      requestId: 'lite',
      error: expect.stringMatching(/^unsupported subscriptionType: the replay serves/),
    });
    expect(errorOf(p, sub('late', MD, ['a']), true)).toEqual({
      requestId: 'late',
      error: expect.stringContaining('has started'),
    });
  });

  it('a subscribe names its markets once each; a market never recorded refuses the whole subscription', () => {
    const p = pmUsSocket.create();
    const r = request(p, sub('md', MD, ['a', 'b', 'a']));
    expect(r).toEqual({ tickers: ['a', 'b'], detail: { requestId: 'md', type: MD } });
    const refusal = p.refuse(r, 'b', new AppError('unknown_ticker', 'Unknown ticker "b" on venue_a_us'));
    expect(refusal.reject).toBe(true);
    expect(refusal.texts.map((t) => JSON.parse(t) as unknown)).toEqual([
      { requestId: 'md', error: 'market not found: b' },
    ]);
    const early = p.refuse(
      r,
      'a',
      new AppError('invalid_timestamp', 'from … is before the start of your window for a, X'),
    );
    expect(early.texts.map((t) => JSON.parse(t) as unknown)).toEqual([
      { requestId: 'md', error: 'from … is before the start of your window for a, X' },
    ]);
  });

  it('each subscription gets its kind of messages under its own requestId; the books and trades are the recorded ones', () => {
    const windows = new Map(['a', 'b'].map((t) => [t, windowOf(t)]));
    const p = pmUsSocket.create();
    subscribed(p, sub('md', MD, ['a', 'b']));
    subscribed(p, sub('tr', TRADE, ['a']));
    subscribed(p, sub('md2', MD, ['a']));
    const texts = played(p, windows);
    const byId = new Map<string, string[]>();
    for (const t of texts) {
      const m = JSON.parse(t) as { requestId: string };
      byId.set(m.requestId, [...(byId.get(m.requestId) ?? []), t]);
    }
    expect([...byId.keys()].sort()).toEqual(['md', 'md2', 'tr']);
    // md2: a's books, the same texts as md's for a but for the requestId.
    const ofMarket = (list: string[], slug: string) =>
      list.filter((t) => (JSON.parse(t) as { marketData?: { marketSlug: string } }).marketData?.marketSlug === slug);
    expect((byId.get('md2') as string[]).map((t) => t.replace('"md2"', '"md"'))).toEqual(
      ofMarket(byId.get('md') as string[], 'a'),
    );
    for (const slug of ['a', 'b']) {
      const client = new PmUsClient();
      for (const t of ofMarket(byId.get('md') as string[], slug)) client.consume(t);
      expect(client.book()).toEqual(directBook(windows.get(slug) as RecordedWindow, Number.MAX_SAFE_INTEGER));
    }
    const trades = new PmUsClient();
    for (const t of byId.get('tr') as string[]) trades.consume(t);
    expect(trades.trades.length).toBe((windows.get('a') as RecordedWindow).trades.length);
    expect(trades.trades.length).toBeGreaterThan(0);
  });

  it('a requestId used again replaces its subscription; unsubscribe before the start drops it, after it stops it', () => {
    const windows = new Map(['a', 'b'].map((t) => [t, windowOf(t)]));
    const p = pmUsSocket.create();
    subscribed(p, sub('md', MD, ['a']));
    subscribed(p, sub('md', MD, ['b']));
    subscribed(p, sub('gone', TRADE, ['a']));
    expect(p.frame(JSON.stringify({ unsubscribe: { requestId: 'gone' } }), false, false)).toEqual({
      kind: 'reply',
      texts: [],
    });
    const texts = played(p, windows);
    expect(texts.length).toBeGreaterThan(0);
    expect(
      texts.every((t) => t.startsWith('{"requestId":"md","subscriptionType":"SUBSCRIPTION_TYPE_MARKET_DATA"')),
    ).toBe(true);
    expect(texts.every((t) => t.includes('"marketSlug":"b"'))).toBe(true);

    const later = pmUsSocket.create();
    subscribed(later, sub('md', MD, ['a']));
    const [stream] = later.streams();
    const messages = replay(windows.get('a') as RecordedWindow, (stream as MarketStream).encoder);
    expect(messages.next().done).toBe(false);
    later.frame(JSON.stringify({ unsubscribe: { requestId: 'md' } }), false, true);
    expect([...messages]).toEqual([]);
  });
});
