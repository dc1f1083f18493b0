import { AppError } from '@depthgate/service-kit';
import { mergeByClock, replay, type RecordedWindow } from '../../engine';
import { ClobClient } from '../../testing/clients';
import { directBook, randomWindow } from '../../testing/history';
import { binary } from '../../testing/venues';
import type { MarketStream, ReplayProtocol, SubscribeRequest } from '../protocol';
import { clobSocket } from './clob';

const YES = '71321045679252212594626385532706912750332728571942532289631379312455583992563';
const NO = '52114319501245915516055106046884209969926127482827954674443846427813813222426';

const subscribe = (assets: unknown, extra: Record<string, unknown> = { type: 'market' }) =>
  JSON.stringify({ assets_ids: assets, ...extra });

/** The request of a subscribe frame (fails the test when the frame is not one). */
function request(p: ReplayProtocol, text: string): SubscribeRequest {
  const f = p.frame(text, false, false);
  if (f.kind !== 'subscribe') throw new Error(`not a subscribe: ${JSON.stringify(f)}`);
  return f.request;
}

/** Subscribes and accepts `assets` as recorded ones. */
function subscribed(p: ReplayProtocol, text: string): void {
  const r = request(p, text);
  expect(p.accept(r, r.tickers)).toEqual([]);
}

/** Each stream's window replayed through its encoder, merged in time: the texts as they would go out. */
function played(p: ReplayProtocol, windows: Map<string, RecordedWindow>): string[] {
  const streams = p.streams();
  return [...mergeByClock(streams.map((s) => replay(windows.get(s.ticker) as RecordedWindow, s.encoder)))].map(
    (m) => m.message.text,
  );
}

const windowOf = (ticker: string, seed: string) => ({
  ...randomWindow(seed, binary, {
    events: 120,
    gapRate: 0.05,
    tradeId: (n) => `0x${n.toString(16).padStart(64, '0')}`,
  }),
  ticker,
});

describe('Polymarket CLOB replay protocol (the market channel)', () => {
  it('PING is answered PONG, at any time', () => {
    const p = clobSocket.create();
    expect(p.frame('PING', false, false)).toEqual({ kind: 'reply', texts: ['PONG'] });
    expect(p.frame('PING', false, true)).toEqual({ kind: 'reply', texts: ['PONG'] });
  });

  it('what the channel cannot read gets the text INVALID OPERATION', () => {
    const p = clobSocket.create();
    const bad = [
      'not json',
      'ping',
      '[1,2]',
      'null',
      '"market"',
      JSON.stringify({ type: 'market' }),
      subscribe('123'),
      subscribe([123]),
      subscribe([YES, null]),
      subscribe([YES], {}),
      subscribe([YES], { type: 'user' }),
      subscribe([YES], { operation: 'replace' }),
    ];
    for (const text of bad)
      expect(p.frame(text, false, false)).toEqual({ kind: 'reply', texts: ['INVALID OPERATION'] });
    expect(p.frame(subscribe([YES]), true, false)).toEqual({ kind: 'reply', texts: ['INVALID OPERATION'] });
  });

  it('a subscribe names its assets once each; later ones add assets; no assets is nothing (no answer)', () => {
    const p = clobSocket.create();
    expect(request(p, subscribe([YES, YES, NO]))).toEqual({ tickers: [YES, NO], detail: { initialDump: true } });
    expect(request(p, subscribe([YES], { type: 'MARKET', initial_dump: false }))).toEqual({
      tickers: [YES],
      detail: { initialDump: false },
    });
    expect(request(p, subscribe([NO], { operation: 'subscribe' })).tickers).toEqual([NO]);
    expect(p.frame(subscribe([]), false, false)).toEqual({ kind: 'reply', texts: [] });
    // An asset already subscribed adds nothing.
    subscribed(p, subscribe([YES]));
    expect(p.frame(subscribe([YES]), false, false)).toEqual({ kind: 'reply', texts: [] });
    expect(request(p, subscribe([YES, NO])).tickers).toEqual([NO]);
  });

  it('an unknown asset is ignored silently; a window before the caller’s closes 1008 naming its start', () => {
    const p = clobSocket.create();
    const r = request(p, subscribe(['999']));
    expect(p.refuse(r, '999', new AppError('unknown_ticker', 'Unknown ticker "999" on venue_a_clob'))).toEqual({
      reject: false,
      texts: [],
    });
    const start = '2026-03-19T00:00:00.000Z';
    const refusal = p.refuse(
      r,
      YES,
      new AppError(
        'invalid_timestamp',
        `from 2026-03-07T00:00:00.000Z is before the start of your window for ${YES}, ${start}`,
      ),
    );
    expect(refusal).toEqual({
      reject: true,
      texts: [],
      close: { code: 1008, reason: `from is before the start of your window, ${start}` },
    });
    expect(Buffer.byteLength(refusal.close?.reason ?? '')).toBeLessThanOrEqual(123);
  });

  it('a subscribe after the replay started gets INVALID OPERATION (it would miss the clock)', () => {
    const p = clobSocket.create();
    expect(p.frame(subscribe([YES]), false, true)).toEqual({ kind: 'reply', texts: ['INVALID OPERATION'] });
    expect(p.frame(subscribe([YES], { operation: 'subscribe' }), false, true)).toEqual({
      kind: 'reply',
      texts: ['INVALID OPERATION'],
    });
  });

  it('both outcome tokens of a market: each rebuilds its own recorded book, every hash checked', () => {
    const windows = new Map([
      [YES, windowOf(YES, 'clob-yes')],
      [NO, windowOf(NO, 'clob-no')],
    ]);
    const p = clobSocket.create();
    subscribed(p, subscribe([YES]));
    // ccxt's way: one message per watched outcome.
    subscribed(p, subscribe([NO], { type: 'market' }));
    expect(p.streams().map((s) => s.ticker)).toEqual([YES, NO]);
    const texts = played(p, windows);
    const clients = new Map([YES, NO].map((a) => [a, new ClobClient(a)]));
    for (const text of texts) {
      const m = JSON.parse(text) as { asset_id?: string; market: string; price_changes?: { asset_id: string }[] };
      expect(m.market).toBe('');
      // A price_change carries one token's entries (each recorded ticker is replayed on its own).
      const assets = new Set(m.price_changes?.map((e) => e.asset_id) ?? [m.asset_id]);
      expect(assets.size).toBe(1);
      (clients.get([...assets][0] as string) as ClobClient).consume(text);
    }
    for (const [asset, w] of windows) {
      const client = clients.get(asset) as ClobClient;
      expect(client.book()).toEqual(directBook(w, Number.MAX_SAFE_INTEGER));
      expect(client.hashesChecked).toBeGreaterThan(50);
      expect(client.trades.length).toBe(w.trades.length);
    }
  });

  it('a window starting inside a gap: its first book (at the gap’s end) names the last earlier trade, hashed with it', () => {
    const lastTrade = {
      ts: 1_772_841_500_000,
      sequence: 1,
      trade_id: `0x${'ab'.repeat(32)}`,
      price: '0.3700',
      size: '12',
      side: 'buy' as const,
      venue_side: '',
    };
    const w = {
      ...randomWindow('clob-start-in-gap', binary, { events: 60, gapRate: 0, startInGap: true }),
      ticker: YES,
      lastTrade,
    };
    const p = clobSocket.create();
    subscribed(p, subscribe([YES]));
    const texts = played(p, new Map([[YES, w]]));
    const first = JSON.parse(texts[0] as string) as { event_type: string; timestamp: string; last_trade_price: string };
    expect([first.event_type, first.timestamp, first.last_trade_price]).toEqual([
      'book',
      String(w.gaps[0]?.to),
      '0.37',
    ]);
    const client = new ClobClient(YES);
    for (const t of texts) client.consume(t);
    expect(client.hashesChecked).toBeGreaterThan(10);
  });

  it('initial_dump false leaves out the book at from; unsubscribe before the start drops the asset, after it stops its messages', () => {
    const windows = new Map([
      [YES, windowOf(YES, 'clob-dump-yes')],
      [NO, windowOf(NO, 'clob-dump-no')],
    ]);
    const quiet = clobSocket.create();
    subscribed(quiet, subscribe([YES], { type: 'market', initial_dump: false }));
    const texts = played(quiet, windows);
    const w = windows.get(YES) as RecordedWindow;
    expect(JSON.parse(texts[0] as string)).not.toMatchObject({ event_type: 'book', timestamp: String(w.start?.ts) });
    expect(texts.length).toBeGreaterThan(0);

    const p = clobSocket.create();
    subscribed(p, subscribe([YES, NO]));
    expect(p.frame(subscribe([NO], { operation: 'unsubscribe' }), false, false)).toEqual({ kind: 'reply', texts: [] });
    expect(p.streams().map((s) => s.ticker)).toEqual([YES]);

    const later = clobSocket.create();
    subscribed(later, subscribe([YES, NO]));
    const streams = later.streams();
    const yes = replay(windows.get(YES) as RecordedWindow, (streams[0] as MarketStream).encoder);
    const no = replay(windows.get(NO) as RecordedWindow, (streams[1] as MarketStream).encoder);
    expect(yes.next().done).toBe(false);
    expect(no.next().done).toBe(false);
    later.frame(subscribe([NO], { operation: 'unsubscribe' }), false, true);
    expect([...no]).toEqual([]);
    expect([...yes].length).toBeGreaterThan(0);
  });
});
