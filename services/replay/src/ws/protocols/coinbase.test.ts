import { AppError } from '@depthgate/service-kit';
import type { RecordedTrade } from '../../engine';
import { replay } from '../../engine';
import { CoinbaseClient } from '../../testing/clients';
import { directBook, randomWindow } from '../../testing/history';
import { VENUES } from '../../testing/venues';
import type { Frame, ReplayProtocol } from '../protocol';
import { coinbaseSocket } from './coinbase';

const coinbase = VENUES.find((v) => v.exchange === 'venue_d');
const grid = coinbase?.grid as NonNullable<typeof coinbase>['grid'];
const text = (m: unknown) => JSON.stringify(m);
const replies = (f: Frame) => (f.kind === 'reply' ? f.texts.map((t) => JSON.parse(t) as unknown) : f);
const failed = (reason: unknown = expect.any(String)) => ({ type: 'error', message: 'Failed to subscribe', reason });

/** Subscribes (before the start) and accepts `stored` as the products' stored names; returns the acks. */
function subscribed(p: ReplayProtocol, m: unknown, stored: string[]): unknown[] {
  const f = p.frame(text(m), false, false);
  if (f.kind !== 'subscribe') throw new Error(`expected a subscribe, got ${JSON.stringify(f)}`);
  return p.accept(f.request, stored).map((t) => JSON.parse(t) as unknown);
}

const lastTrade: RecordedTrade = {
  ts: 1_772_841_599_000,
  sequence: 1,
  trade_id: '99',
  price: '65000.01',
  size: '0.5',
  side: 'buy',
  venue_side: 'sell',
} as RecordedTrade;

describe('Coinbase replay protocol (Exchange feed)', () => {
  it('subscribe (string channels take product_ids, object channels their own) → the connection’s whole subscriptions list', () => {
    const p = coinbaseSocket.create();
    const f = p.frame(
      text({
        type: 'subscribe',
        product_ids: ['BTC-USD', 'eth-usd'],
        channels: ['level2', { name: 'matches', product_ids: ['BTC-USD'] }],
        // The signature fields are accepted and ignored (the caller's depthgate key is its authentication).
        key: 'k',
        passphrase: 'p',
        timestamp: '1',
        signature: 's',
      }),
      false,
      false,
    );
    expect(f).toEqual({
      kind: 'subscribe',
      request: {
        tickers: ['BTC-USD', 'eth-usd'],
        detail: {
          pairs: [
            ['level2', 'BTC-USD'],
            ['level2', 'eth-usd'],
            ['matches', 'BTC-USD'],
          ],
        },
      },
    });
    if (f.kind !== 'subscribe') throw new Error('unreachable');
    expect(p.accept(f.request, ['BTC-USD', 'ETH-USD']).map((t) => JSON.parse(t) as unknown)).toEqual([
      {
        type: 'subscriptions',
        channels: [
          { name: 'level2', product_ids: ['BTC-USD', 'ETH-USD'] },
          { name: 'matches', product_ids: ['BTC-USD'] },
        ],
      },
    ]);
    // A second subscribe before the start: the answer lists the whole connection.
    expect(
      subscribed(p, { type: 'subscribe', product_ids: ['SOL-USD'], channels: ['level2_batch', 'matches'] }, [
        'SOL-USD',
      ]),
    ).toEqual([
      {
        type: 'subscriptions',
        channels: [
          { name: 'level2', product_ids: ['BTC-USD', 'ETH-USD'] },
          { name: 'level2_batch', product_ids: ['SOL-USD'] },
          { name: 'matches', product_ids: ['BTC-USD', 'SOL-USD'] },
        ],
      },
    ]);
    expect(p.streams().map((s) => s.ticker)).toEqual(['BTC-USD', 'ETH-USD', 'SOL-USD']);
  });

  it('bad frames get "Failed to subscribe" with the reason, and name nothing', () => {
    const p = coinbaseSocket.create();
    const cases: [string, string | RegExp][] = [
      ['not json', 'type must be subscribe or unsubscribe'],
      ['[1]', 'type must be subscribe or unsubscribe'],
      [
        text({ type: 'hello', product_ids: ['BTC-USD'], channels: ['level2'] }),
        'type must be subscribe or unsubscribe',
      ],
      [text({ type: 'subscribe', product_ids: ['BTC-USD'] }), 'No channels or product ids provided'],
      [text({ type: 'subscribe', channels: ['level2'] }), 'No channels or product ids provided'],
      [text({ type: 'subscribe', product_ids: [], channels: ['level2'] }), 'No channels or product ids provided'],
      [text({ type: 'subscribe', product_ids: ['BTC-USD'], channels: ['full'] }), 'full is not a valid channel'],
      [
        text({ type: 'subscribe', product_ids: ['BTC-USD'], channels: [{ product_ids: ['X'] }] }),
        'undefined is not a valid channel',
      ],
      [text({ type: 'subscribe', product_ids: [7], channels: ['level2'] }), '7 is not a valid product'],
      [text({ type: 'subscribe', product_ids: ['BTC-USD'], channels: ['ticker'] }), /^ticker is not replayed/],
      [
        text({ type: 'subscribe', product_ids: ['BTC-USD'], channels: ['matches', 'heartbeat'] }),
        /^heartbeat is not replayed/,
      ],
    ];
    for (const [frame, reason] of cases)
      expect(replies(p.frame(frame, false, false))).toEqual([
        failed(typeof reason === 'string' ? reason : expect.stringMatching(reason)),
      ]);
    expect(p.streams()).toEqual([]);
  });

  it('a product never recorded refuses the whole subscribe ("X is not a valid product"); a window before the key’s names its start', () => {
    const p = coinbaseSocket.create();
    const f = p.frame(
      text({ type: 'subscribe', product_ids: ['BTC-USD', 'DOGE-USD'], channels: ['level2'] }),
      false,
      false,
    );
    if (f.kind !== 'subscribe') throw new Error('expected a subscribe');
    const r = p.refuse(f.request, 'DOGE-USD', new AppError('unknown_ticker', 'Unknown ticker'));
    expect(r.reject).toBe(true);
    expect(r.texts.map((t) => JSON.parse(t) as unknown)).toEqual([failed('DOGE-USD is not a valid product')]);
    const early = new AppError(
      'invalid_timestamp',
      'from … is before the start of your window for BTC-USD, 2026-03-19',
    );
    expect(p.refuse(f.request, 'BTC-USD', early).texts.map((t) => JSON.parse(t) as unknown)).toEqual([
      failed(early.message),
    ]);
  });

  it('a subscribe after the start is refused; unsubscribe answers the list after it (before the start: removed; after: stopped)', () => {
    const p = coinbaseSocket.create();
    subscribed(p, { type: 'subscribe', product_ids: ['A-USD', 'B-USD'], channels: ['level2', 'matches'] }, [
      'A-USD',
      'B-USD',
    ]);
    // Its pairs of channels never replayed end nothing; the others are ended (the simulator ends every pair named).
    expect(
      replies(
        p.frame(
          text({ type: 'unsubscribe', product_ids: ['a-usd'], channels: ['matches', 'heartbeat'] }),
          false,
          false,
        ),
      ),
    ).toEqual([
      {
        type: 'subscriptions',
        channels: [
          { name: 'level2', product_ids: ['A-USD', 'B-USD'] },
          { name: 'matches', product_ids: ['B-USD'] },
        ],
      },
    ]);
    const streams = p.streams();
    expect(
      replies(p.frame(text({ type: 'subscribe', product_ids: ['A-USD'], channels: ['level2'] }), false, true)),
    ).toEqual([failed(expect.stringMatching(/replay has started/))]);
    const w = { ...randomWindow('coinbase-unsubscribe', grid, { events: 80, gapRate: 0 }), lastTrade };
    const [a, b] = streams.map((s) => replay(w, s.encoder));
    const first = (a as Iterator<{ text: string }>).next().value?.text as string;
    expect(JSON.parse(first)).toMatchObject({ type: 'snapshot', product_id: 'A-USD' });
    // A-USD has no matches any more: no last_match after its snapshot.
    expect(JSON.parse((a as Iterator<{ text: string }>).next().value?.text as string).type).not.toBe('last_match');
    expect((b as Iterator<{ text: string }>).next().value?.text).toContain('"type":"snapshot"');
    expect((b as Iterator<{ text: string }>).next().value?.text).toContain('"type":"last_match"');
    expect(
      replies(p.frame(text({ type: 'unsubscribe', product_ids: ['B-USD'], channels: ['level2'] }), false, true)),
    ).toEqual([
      {
        type: 'subscriptions',
        channels: [
          { name: 'level2', product_ids: ['A-USD'] },
          { name: 'matches', product_ids: ['B-USD'] },
        ],
      },
    ]);
    const rest = [...(b as Iterable<{ text: string }>)].map((m) => (JSON.parse(m.text) as { type: string }).type);
    expect(new Set(rest)).toEqual(new Set(['match']));
  });

  it('a window without a book at its start (inside a gap, before the first book) still sends last_match first, matches alone too', () => {
    for (const o of [{ startInGap: true }, { startBeforeFirstBook: true }]) {
      const w = {
        ...randomWindow(`coinbase-no-book|${Object.keys(o)[0]}`, grid, { events: 40, gapRate: 0, ...o }),
        lastTrade,
      };
      expect(w.start).toBeUndefined();
      for (const channels of [['matches'], ['level2', 'matches']]) {
        const p = coinbaseSocket.create();
        subscribed(p, { type: 'subscribe', product_ids: ['BTC-USD'], channels }, ['BTC-USD']);
        const [s] = p.streams();
        const messages = [...replay(w, s?.encoder as never)];
        expect(JSON.parse(messages[0]?.text as string)).toMatchObject({ type: 'last_match', trade_id: 99 });
        // At the window's start, once.
        expect(messages[0]?.ts).toBe(w.opening.ts);
        expect(messages.filter((m) => m.text.includes('"type":"last_match"'))).toHaveLength(1);
      }
      const p = coinbaseSocket.create();
      subscribed(p, { type: 'subscribe', product_ids: ['BTC-USD'], channels: ['level2'] }, ['BTC-USD']);
      const [s] = p.streams();
      expect([...replay(w, s?.encoder as never)].filter((m) => m.text.includes('last_match'))).toEqual([]);
    }
  });

  it('only the channels subscribed: matches alone gets last_match and match; level2 alone the book; level2_batch is level2', () => {
    const w = { ...randomWindow('coinbase-channels', grid, { events: 300, gapRate: 0.05 }), lastTrade };
    expect(w.gaps.length).toBeGreaterThan(0);
    const run = (channels: string[]) => {
      const p = coinbaseSocket.create();
      subscribed(p, { type: 'subscribe', product_ids: ['BTC-USD'], channels }, ['BTC-USD']);
      const [s] = p.streams();
      return [...replay(w, s?.encoder as never)].map((m) => m.text);
    };
    const types = (texts: string[]) => [...new Set(texts.map((t) => (JSON.parse(t) as { type: string }).type))].sort();
    const all = run(['level2', 'matches']);
    expect(types(all)).toEqual(['l2update', 'last_match', 'match', 'snapshot']);
    const matches = run(['matches']);
    expect(types(matches)).toEqual(['last_match', 'match']);
    expect(JSON.parse(matches[0] as string)).toMatchObject({ type: 'last_match', trade_id: 99 });
    const level2 = run(['level2']);
    expect(types(level2)).toEqual(['l2update', 'snapshot']);
    expect(run(['level2_batch'])).toEqual(level2);
    // Both book channels: the book messages once.
    expect(run(['level2', 'level2_batch'])).toEqual(level2);
    expect(all).toEqual(all.filter((t) => level2.includes(t) || matches.includes(t)));
    expect(all.length).toBe(level2.length + matches.length);
    const client = new CoinbaseClient();
    for (const t of all) client.consume(t);
    expect(client.book()).toEqual(directBook(w, Number.MAX_SAFE_INTEGER));
    expect(all.filter((t) => client.isWholeBook(t)).length).toBe(1 + w.gaps.filter((g) => g.book).length);
  });
});
