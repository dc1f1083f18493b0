/**
 * Gemini (venue-c) and Coinbase (venue-d) over the WebSocket replay, on the harness (testing/harness.ts: the replay
 * service and the history service as deployed, a random recorded history per venue). Each venue's protocol end to end:
 * several markets in one subscribe, merged and each rebuilt by the venue's reference client to the history's
 * `/book?at=` and `/trades`; a window crossing a recorded gap gets the venue's reset form; only the channels
 * subscribed; every bad input answered in the venue's own error form (or closed with a clear reason), never a hang;
 * 1000 "replay finished" at the end. Then the runnable examples of docs/replay.md (services/replay/examples: a plain
 * `ws` bot per venue, and ccxt pro's gemini and coinbaseexchange unchanged) run against the replay as processes.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { formatDecimal, parseDecimal } from '@depthgate/feeds';
import type { ExchangeKey } from '@depthgate/platforms';
import { WsTestClient, repoRoot } from '@depthgate/test-utils';
import type { RecordedWindow } from './engine';
import { randomWindow, type ExactBook } from './testing/history';
import { startHarness, storeWindow, TICKERS, type Harness } from './testing/harness';
import { VENUES, type Venue } from './testing/venues';

const run = promisify(execFile);
const gemini = VENUES.find((v) => v.exchange === 'venue_c') as Venue;
const coinbase = VENUES.find((v) => v.exchange === 'venue_d') as Venue;
/** A second market of each venue (stored beside the harness's), subscribed in the same frame as the first. */
const SECOND: Partial<Record<ExchangeKey, string>> = { venue_c: 'ETHUSD', venue_d: 'ETH-USD' };

let h: Harness;
const second = new Map<ExchangeKey, RecordedWindow>();

beforeAll(async () => {
  // The default settle time (ccxt's coinbaseexchange spaces its subscribes by its rate limit, 100 ms).
  h = await startHarness({
    seed: 'gc',
    gapRate: 0.03,
    env: { REPLAY_SUBSCRIBE_SETTLE_MS: '250', REPLAY_SUBSCRIBE_TIMEOUT_MS: '2000' },
  });
  for (const v of [gemini, coinbase]) {
    const w = randomWindow(`gc-second|${v.exchange}`, v.grid, {
      events: 300,
      gapRate: 0.03,
      ...(v.tradeId ? { tradeId: (n, rng) => (v.tradeId as NonNullable<Venue['tradeId']>)(n + 100_000, rng) } : {}),
    });
    second.set(v.exchange, w);
    await storeWindow(h.db, v.exchange, SECOND[v.exchange] as string, w);
  }
}, 90_000);

afterAll(async () => {
  await h?.close();
});

/** A socket with the harness's key, or (`anonymous`) none. */
const open = (platform: string, query: string, anonymous = false) =>
  WsTestClient.open(h.wsUrl(platform, query), { headers: anonymous ? {} : { 'X-API-Key': h.key } });

/** The whole span of both markets of a venue. */
function spanOf(exchange: ExchangeKey): { first: number; last: number } {
  const a = h.span(exchange);
  const w = second.get(exchange) as RecordedWindow;
  const times = [...w.deltas.map((d) => d.ts), ...w.trades.map((t) => t.ts), ...w.gaps.map((g) => g.to)];
  return { first: Math.max(a.first, w.start?.ts ?? -Infinity), last: Math.max(a.last, ...times) };
}

/** The market a replayed text is of (read from the text: Gemini's ids would lose digits in a JSON parser). */
const marketOf = (text: string) => /"(?:symbol|product_id)":"([^"]+)"/.exec(text)?.[1];

/** A market's messages over the socket must be the HTTP replay's of its window, and rebuild the history's book. */
async function checkMarket(v: Venue, ticker: string, texts: string[], from: number, to: number): Promise<void> {
  const http = await h.replayed(`/api/${v.exchange}/replay/${ticker}?from=${from}&to=${to}`);
  expect(http.status).toBe(200);
  expect(texts).toEqual(http.texts);
  const client = v.client(ticker);
  for (const t of texts) client.consume(t);
  const book = await h.historyBook(v.exchange, to, ticker);
  expect(book).toBeDefined();
  expect(client.book()).toEqual(book);
  expect(client.trades).toEqual(await h.historyTrades(v, from, to, ticker));
}

/** A window around a recorded gap of the harness's market: it starts on a book before the gap and ends after it. */
function aroundGap(exchange: ExchangeKey): { from: number; to: number } {
  const w = h.windows.get(exchange) as RecordedWindow;
  const start = w.start?.ts as number;
  const gap = w.gaps.find((g) => g.book && g.from > start + 1);
  if (!gap) throw new Error('the history has no gap to cross');
  return { from: gap.from - 1, to: gap.to + 1 };
}

describe('Gemini (/ws/replay/v1/gemini)', () => {
  const l2 = (...symbols: unknown[]) => ({ type: 'subscribe', subscriptions: [{ name: 'l2', symbols }] });
  const error = (reason: string, message: unknown = expect.any(String)) => ({
    type: 'error',
    result: 'error',
    reason,
    message,
  });

  it('one subscribe of two symbols: each one’s whole book, changes and trades, merged; its book and trades are the history’s; 1000 "replay finished"', async () => {
    const { first, last } = spanOf('venue_c');
    // `venue-c` and a lower-case symbol: the platform key and the history's case-insensitive match.
    const c = await open('venue-c', `from=${first}&to=${last}&speed=max`);
    c.send(l2('BTCUSD', 'ethusd', 'BTCUSD'));
    await c.untilClosed(60_000);
    expect([c.closeCode, c.closeReason]).toEqual([1000, 'replay finished']);
    expect(new Set(c.texts.map(marketOf))).toEqual(new Set(['BTCUSD', 'ETHUSD']));
    for (const ticker of ['BTCUSD', 'ETHUSD'])
      await checkMarket(
        gemini,
        ticker,
        c.texts.filter((t) => marketOf(t) === ticker),
        first,
        last,
      );
  }, 90_000);

  it('a window crossing a recorded gap gets the first-message form again (the whole book at the gap’s end)', async () => {
    const { from, to } = aroundGap('venue_c');
    const c = await open('gemini', `from=${from}&to=${to}&speed=max`);
    c.send(l2(TICKERS.venue_c));
    await c.untilClosed(30_000);
    expect(c.closeCode).toBe(1000);
    const whole = c.texts.filter((t) => gemini.client().isWholeBook(t));
    expect(whole.length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(whole[1] as string)).toMatchObject({ type: 'l2_updates', trades: [], auction_events: [] });
    await checkMarket(gemini, TICKERS.venue_c, c.texts, from, to);
  });

  it('bad frames get Gemini’s error form and the socket stays open; an unknown symbol is InvalidSymbol and the others go on', async () => {
    const { first } = spanOf('venue_c');
    const c = await open('gemini', `from=${first}&to=${first + 500}&speed=max`);
    const cases: [unknown, string][] = [
      ['not json', 'InvalidJson'],
      [[1, 2], 'InvalidJson'],
      [{ type: 'subscribe' }, 'InvalidJson'],
      [{ type: 'hello', subscriptions: [] }, 'InvalidJson'],
      [{ type: 'subscribe', subscriptions: [{ name: 'candles_1m', symbols: ['BTCUSD'] }] }, 'InvalidJson'],
      [l2(), 'InvalidJson'],
    ];
    for (const [i, [frame, reason]] of cases.entries()) {
      c.send(frame);
      await c.until((m) => m.length > i, `the answer to case ${i}`);
      expect(c.messages[i]).toEqual(error(reason));
    }
    c.send(l2('NEVERUSD', 'BTCUSD'));
    await c.untilClosed(30_000);
    expect([c.closeCode, c.closeReason]).toEqual([1000, 'replay finished']);
    expect(c.messages[cases.length]).toEqual(error('InvalidSymbol', 'invalid symbol NEVERUSD'));
    const replayed = c.texts.slice(cases.length + 1);
    expect(replayed.length).toBeGreaterThan(0);
    expect(replayed.every((t) => marketOf(t) === 'BTCUSD')).toBe(true);
  });

  it('a subscribe of symbols never recorded only: the errors, and the socket closed 1008 when nothing replayable was subscribed in time, no hang', async () => {
    const { first } = spanOf('venue_c');
    const c = await open('gemini', `from=${first}&to=${first + 500}&speed=max`);
    c.send(l2('NEVERUSD', 7));
    await c.untilClosed(30_000);
    expect(c.messages).toEqual([
      error('InvalidSymbol', 'invalid symbol NEVERUSD'),
      error('InvalidSymbol', 'invalid symbol 7'),
    ]);
    expect([c.closeCode, c.closeReason]).toEqual([1008, 'no subscribe to a replayable market within 2 s']);
  });

  it('a subscribe after the replay started is ReplayStarted; a window before the caller’s is InvalidTimestamp naming its start', async () => {
    const { first, last } = spanOf('venue_c');
    // A millionth of real time: after its first book the replay waits for as long as the test lasts.
    const c = await open('gemini', `from=${first}&to=${last}&speed=0.000001`);
    c.send(l2('BTCUSD'));
    await c.until((m) => m.some((x) => x.type === 'l2_updates'), 'the first book');
    c.send(l2('ETHUSD'));
    await c.until((m) => m.some((x) => x.type === 'error'), 'the refusal');
    expect(c.messages.find((x) => x.type === 'error')).toEqual(error('ReplayStarted'));
    expect(c.closed).toBe(false);
    c.ws.close();
    // Anonymous callers see the last day only.
    const anonymous = await open('gemini', `from=${first}&to=${first + 10}`, true);
    anonymous.send(l2('BTCUSD'));
    await anonymous.untilClosed(30_000);
    expect(anonymous.messages).toEqual([
      error('InvalidTimestamp', expect.stringContaining(new Date(h.now - 86_400_000).toISOString())),
    ]);
    expect(anonymous.closeCode).toBe(1008);
  });
});

describe('Coinbase (/ws/replay/v1/coinbase)', () => {
  const failed = (reason: unknown = expect.any(String)) => ({ type: 'error', message: 'Failed to subscribe', reason });

  it('level2 + matches for two products: the whole subscriptions list, then each product’s snapshot, l2updates and matches; book and trades are the history’s', async () => {
    const { first, last } = spanOf('venue_d');
    const c = await open('coinbase', `from=${first}&to=${last}&speed=max`);
    c.send({
      type: 'subscribe',
      product_ids: ['BTC-USD'],
      channels: [
        'level2',
        { name: 'matches', product_ids: ['BTC-USD', 'eth-usd'] },
        { name: 'level2', product_ids: ['ETH-USD'] },
      ],
      // A live bot's signature fields: accepted and ignored.
      key: 'k',
      passphrase: 'p',
      timestamp: '1772841600',
      signature: 'c2lnbmF0dXJl',
    });
    await c.untilClosed(60_000);
    expect([c.closeCode, c.closeReason]).toEqual([1000, 'replay finished']);
    expect(c.messages[0]).toEqual({
      type: 'subscriptions',
      channels: [
        { name: 'level2', product_ids: ['BTC-USD', 'ETH-USD'] },
        { name: 'matches', product_ids: ['BTC-USD', 'ETH-USD'] },
      ],
    });
    const texts = c.texts.slice(1);
    expect(new Set(texts.map(marketOf))).toEqual(new Set(['BTC-USD', 'ETH-USD']));
    for (const ticker of ['BTC-USD', 'ETH-USD'])
      await checkMarket(
        coinbase,
        ticker,
        texts.filter((t) => marketOf(t) === ticker),
        first,
        last,
      );
  }, 90_000);

  it('only the channels subscribed: matches alone, level2 alone; level2_batch is served as level2', async () => {
    const { first, last } = spanOf('venue_d');
    const replayOf = async (channels: string[]) => {
      const c = await open('coinbase', `from=${first}&to=${last}&speed=max`);
      c.send({ type: 'subscribe', product_ids: [TICKERS.venue_d], channels });
      await c.untilClosed(60_000);
      expect(c.closeCode).toBe(1000);
      expect(c.messages[0]).toEqual({
        type: 'subscriptions',
        channels: channels.map((name) => ({ name, product_ids: [TICKERS.venue_d] })),
      });
      return c.texts.slice(1);
    };
    const types = (texts: string[]) => new Set(texts.map((t) => (JSON.parse(t) as { type: string }).type));
    const matches = await replayOf(['matches']);
    expect([...types(matches)].every((t) => t === 'match' || t === 'last_match')).toBe(true);
    const client = coinbase.client();
    for (const t of matches) client.consume(t);
    expect(client.trades).toEqual(await h.historyTrades(coinbase, first, last));
    expect(client.trades.length).toBeGreaterThan(0);
    const level2 = await replayOf(['level2']);
    expect(types(level2)).toEqual(new Set(['snapshot', 'l2update']));
    expect(await replayOf(['level2_batch'])).toEqual(level2);
  }, 90_000);

  it('a window crossing a recorded gap gets a new snapshot', async () => {
    const { from, to } = aroundGap('venue_d');
    const c = await open('coinbase', `from=${from}&to=${to}&speed=max`);
    c.send({ type: 'subscribe', product_ids: [TICKERS.venue_d], channels: ['level2', 'matches'] });
    await c.untilClosed(30_000);
    expect(c.closeCode).toBe(1000);
    expect(c.messages.filter((m) => m.type === 'snapshot').length).toBeGreaterThanOrEqual(2);
    await checkMarket(coinbase, TICKERS.venue_d, c.texts.slice(1), from, to);
  });

  it('bad frames get "Failed to subscribe" with the reason and the socket stays open; a product never recorded refuses the whole subscribe', async () => {
    const { first } = spanOf('venue_d');
    const c = await open('coinbase', `from=${first}&to=${first + 500}&speed=max`);
    const sub = (channels: unknown[], product_ids: unknown[] = ['BTC-USD']) => ({
      type: 'subscribe',
      product_ids,
      channels,
    });
    const cases: [unknown, unknown][] = [
      ['not json', 'type must be subscribe or unsubscribe'],
      [{ type: 'hello' }, 'type must be subscribe or unsubscribe'],
      [sub([]), 'No channels or product ids provided'],
      [sub(['level2'], []), 'No channels or product ids provided'],
      [sub(['full']), 'full is not a valid channel'],
      [sub(['ticker']), expect.stringMatching(/^ticker is not replayed/)],
      [sub(['level2'], ['BTC-USD', 'DOGE-USD']), 'DOGE-USD is not a valid product'],
    ];
    for (const [i, [frame, reason]] of cases.entries()) {
      c.send(frame);
      await c.until((m) => m.length > i, `the answer to case ${i}`);
      expect(c.messages[i]).toEqual(failed(reason));
    }
    c.send(sub(['level2']));
    await c.untilClosed(30_000);
    expect([c.closeCode, c.closeReason]).toEqual([1000, 'replay finished']);
    expect(c.messages[cases.length]).toEqual({
      type: 'subscriptions',
      channels: [{ name: 'level2', product_ids: ['BTC-USD'] }],
    });
    expect(c.messages[cases.length + 1]).toMatchObject({ type: 'snapshot', product_id: 'BTC-USD' });
  });

  it('a subscribe after the replay started is refused; a window before the caller’s names its start', async () => {
    const { first, last } = spanOf('venue_d');
    const c = await open('coinbase', `from=${first}&to=${last}&speed=0.000001`);
    c.send({ type: 'subscribe', product_ids: ['BTC-USD'], channels: ['level2'] });
    await c.until((m) => m.some((x) => x.type === 'snapshot'), 'the first book');
    c.send({ type: 'subscribe', product_ids: ['ETH-USD'], channels: ['level2'] });
    await c.until((m) => m.some((x) => x.type === 'error'), 'the refusal');
    expect(c.messages.find((x) => x.type === 'error')).toEqual(failed(expect.stringMatching(/replay has started/)));
    c.ws.close();
    const anonymous = await open('coinbase', `from=${first}&to=${first + 10}`, true);
    anonymous.send({ type: 'subscribe', product_ids: ['BTC-USD'], channels: ['level2'] });
    await anonymous.until((m) => m.length > 0, 'the refusal');
    expect(anonymous.messages[0]).toEqual(failed(expect.stringContaining(new Date(h.now - 86_400_000).toISOString())));
    anonymous.ws.close();
  });
});

describe('the examples of docs/replay.md against the replay', () => {
  const examples = path.join(repoRoot, 'services/replay/examples');
  const example = async (file: string, args: string[]) => {
    const { stdout } = await run(process.execPath, [path.join(examples, file), ...args], {
      env: { ...process.env, REPLAY_URL: h.wsUrl('x', '').replace(/\/ws\/replay\/v1\/x\?$/, ''), DEPTHGATE_KEY: h.key },
      timeout: 60_000,
    });
    return JSON.parse(stdout.trim().split('\n').pop() as string) as {
      close?: [number, string];
      bids: [string | number, string | number][];
      asks: [string | number, string | number][];
      trades: number | [number, number, number, string][];
    };
  };
  /** A book, best first, as `[price, size]` texts in canonical form (or as numbers, as ccxt keeps them). */
  const levels = (book: ExactBook, numbers: boolean) => {
    const side = (m: Map<string, bigint>, sign: number) =>
      [...m]
        .sort(([a], [b]) => sign * (Number(b) - Number(a)))
        .map(([p, q]) => (numbers ? [Number(p), Number(formatDecimal(q))] : [p, formatDecimal(q)]));
    return { bids: side(book.bids, 1), asks: side(book.asks, -1) };
  };
  const canonical = (l: [string | number, string | number][]) =>
    l.map(([p, q]) => [formatDecimal(parseDecimal(String(p))), formatDecimal(parseDecimal(String(q)))]);

  it.each([
    ['gemini.mjs', gemini],
    ['coinbase.mjs', coinbase],
  ])(
    '%s (a plain ws bot) ends with the history’s book and trades',
    async (file, v) => {
      const { first, last } = h.span(v.exchange);
      const out = await example(file, [
        TICKERS[v.exchange],
        new Date(first).toISOString(),
        new Date(last).toISOString(),
      ]);
      expect(out.close).toEqual([1000, 'replay finished']);
      const book = (await h.historyBook(v.exchange, last)) as ExactBook;
      expect({ bids: canonical(out.bids), asks: canonical(out.asks) }).toEqual(levels(book, false));
      expect(out.trades).toBe((await h.historyTrades(v, first - 1, last)).length);
    },
    90_000,
  );

  it.each([
    ['gemini', gemini],
    ['coinbase', coinbase],
  ])(
    'ccxt pro %s, pointed at the replay, holds the history’s book and trades',
    async (name, v) => {
      const { first, last } = h.span(v.exchange);
      const out = await example('ccxt.mjs', [name, 'BTC/USD', String(first), String(last)]);
      const book = (await h.historyBook(v.exchange, last)) as ExactBook;
      expect({ bids: out.bids, asks: out.asks }).toEqual(levels(book, true));
      const trades = (await h.historyTrades(v, first - 1, last)).map((k) => {
        const [ts, price, size, side] = k.split('|');
        return [Number(ts), Number(price), Number(size), side];
      });
      expect(out.trades).toEqual(trades);
    },
    90_000,
  );

  it('ccxt pro coinbase with a product never recorded gets the replay’s refusal as its ExchangeError', async () => {
    const { first, last } = h.span('venue_d');
    const failure = await example('ccxt.mjs', ['coinbase', 'DOGE/USD', String(first), String(last)]).then(
      () => undefined,
      (err: unknown) => err as { code?: number; stderr?: string },
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain('ExchangeError: coinbaseexchange DOGE-USD is not a valid product');
  }, 90_000);
});
