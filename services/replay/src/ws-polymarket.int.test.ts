/**
 * The WebSocket replay of Polymarket's two venues, on the harness (testing/harness.ts: the replay service and the
 * history service as deployed, on the test ClickHouse, with a random recorded history per venue), beyond what
 * ws.int.test.ts checks of every venue (100 random windows each):
 *
 * - Polymarket CLOB (`/ws/replay/v1/polymarket-clob`): both outcome tokens of a market subscribed the way ccxt does
 *   (one `type: market` message per token), each token's book rebuilt from its own messages with every hash checked,
 *   equal to `/book?at=` of that token, its trades to `/trades`; a recorded gap's reset (a hashed `book`); `PING`,
 *   `INVALID OPERATION` for what the channel cannot read, unknown assets ignored, a subscribe after the start
 *   refused, the caller's window (1008), and the end (1000 "replay finished").
 * - Polymarket US (`/ws/replay/v1/polymarket-us`): subscriptions by requestId (each gets its kind of messages), a
 *   gap's reset (the whole book), every error in the venue's `{"requestId","error"}` form with the socket staying
 *   open.
 * - The examples of docs/replay.md (services/replay/examples), run as processes: a plain `ws` bot per venue (the
 *   CLOB's verifying every hash), ccxt's `prediction.polymarket` and Polymarket's own `polymarket-us`
 *   (`MarketsWebSocket`), unchanged, pointed at the replay: each ends with the history's book and trades.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { formatDecimal, parseDecimal } from '@depthgate/feeds';
import { Rng } from '@depthgate/service-kit';
import { repoRoot, WsTestClient } from '@depthgate/test-utils';
import type { RecordedGap, RecordedWindow } from './engine';
import { ClobClient, PmUsClient } from './testing/clients';
import { startHarness, storeWindow, TICKERS, type Harness } from './testing/harness';
import { exactBook, randomWindow, type ExactBook } from './testing/history';
import { VENUES, type Venue } from './testing/venues';

const YES = TICKERS.venue_a_clob;
/** The other outcome token of the market: a recorded ticker of its own, with its own book. */
const NO = '52114319501245915516055106046884209969926127482827954674443846427813813222426';
const SLUG = TICKERS.venue_a_us;
const run = promisify(execFile);

const clob = VENUES.find((v) => v.exchange === 'venue_a_clob') as Venue;
const pmUs = VENUES.find((v) => v.exchange === 'venue_a_us') as Venue;

let h: Harness;
let noWindow: RecordedWindow;

beforeAll(async () => {
  h = await startHarness({ seed: 'pm', gapRate: 0.04, env: { REPLAY_SUBSCRIBE_TIMEOUT_MS: '2000' } });
  noWindow = randomWindow('pm|no-token', clob.grid, { events: 300, gapRate: 0.04, tradeId: clob.tradeId });
  await storeWindow(h.db, 'venue_a_clob', NO, noWindow);
}, 90_000);

afterAll(async () => {
  await h?.close();
});

/** `key` null: anonymous (the last day). */
const open = (platform: string, query: string, key: string | null = h.key) =>
  WsTestClient.open(h.wsUrl(platform, query), { headers: key ? { 'X-API-Key': key } : {} });

/** A recorded gap closed by a book, with recorded rows before it, in the middle of an exchange's history. */
function closedGap(w: RecordedWindow): RecordedGap {
  const start = w.start?.ts ?? -Infinity;
  const g = w.gaps.find((x) => x.book !== undefined && x.from > start && x.to > start);
  if (!g) throw new Error('the random history has no closed gap after its start');
  return g;
}

describe('Polymarket CLOB over /ws/replay/v1/polymarket-clob', () => {
  it('both outcome tokens, subscribed one message each (as ccxt does): each token’s book and trades are its own, every hash right', async () => {
    const rng = new Rng('pm|clob-windows');
    const { first, last } = h.span('venue_a_clob');
    const windows: [number, number][] = [
      [first, last],
      ...Array.from({ length: 4 }, () => {
        const from = first + rng.int(last - first);
        return [from, from + 1 + rng.int(last - from)] as [number, number];
      }),
    ];
    for (const [from, to] of windows) {
      const c = await open('polymarket-clob', `from=${from}&to=${to}&speed=max`);
      c.send({ assets_ids: [YES], type: 'market' });
      c.send({ assets_ids: [NO], type: 'market' });
      await c.untilClosed(30_000);
      expect([c.closeCode, c.closeReason]).toEqual([1000, 'replay finished']);
      const clients = new Map([YES, NO].map((a) => [a, new ClobClient(a)]));
      for (const text of c.texts) {
        const m = JSON.parse(text) as { asset_id?: string; price_changes?: { asset_id: string }[] };
        const assets = new Set(m.price_changes?.map((e) => e.asset_id) ?? [m.asset_id]);
        // One token per message: each recorded token is replayed on its own.
        expect(assets.size).toBe(1);
        (clients.get([...assets][0] as string) as ClobClient).consume(text);
      }
      for (const [asset, client] of clients) {
        const book = await h.historyBook('venue_a_clob', to, asset);
        if (book !== undefined && client.book() !== undefined) expect(client.book()).toEqual(book);
        expect(client.trades).toEqual(await h.historyTrades(clob, from, to, asset));
      }
      // The whole history: both books and many hashes.
      if (from === first) for (const client of clients.values()) expect(client.hashesChecked).toBeGreaterThan(100);
    }
  }, 120_000);

  it('a window crossing a recorded gap gets a fresh hashed book at the gap’s end, holding the gap’s snapshot', async () => {
    const w = h.windows.get('venue_a_clob') as RecordedWindow;
    const g = closedGap(w);
    const c = await open('polymarket-clob', `from=${g.from - 1}&to=${g.to + 1}&speed=max`);
    c.send({ assets_ids: [YES], type: 'market' });
    await c.untilClosed(30_000);
    expect(c.closeCode).toBe(1000);
    const client = new ClobClient(YES);
    let reset = false;
    for (const text of c.texts) {
      client.consume(text);
      const m = JSON.parse(text) as { event_type: string; timestamp: string };
      if (m.event_type === 'book' && m.timestamp === String(g.to) && !reset) {
        reset = true;
        expect(client.book()).toEqual(exactBook(g.book as NonNullable<RecordedGap['book']>));
      }
    }
    expect(reset).toBe(true);
  });

  it('PING → PONG; what the channel cannot read → INVALID OPERATION; unknown assets ignored; the socket stays open for a good subscribe', async () => {
    const { first } = h.span('venue_a_clob');
    const c = await open('polymarket-clob', `from=${first}&to=${first + 1000}&speed=max`);
    const answers: [string, string | undefined][] = [
      ['PING', 'PONG'],
      ['not json', 'INVALID OPERATION'],
      ['[1,2]', 'INVALID OPERATION'],
      [JSON.stringify({ assets_ids: YES, type: 'market' }), 'INVALID OPERATION'],
      [JSON.stringify({ assets_ids: [YES] }), 'INVALID OPERATION'],
      [JSON.stringify({ assets_ids: [1], type: 'market' }), 'INVALID OPERATION'],
    ];
    for (const [i, [text, answer]] of answers.entries()) {
      c.send(text);
      await c.until(() => c.texts.length > i, `the answer to ${text}`);
      expect(c.texts[i]).toBe(answer);
    }
    // Unknown assets, and no assets: nothing comes back (as on the venue); a PING after them is answered first.
    c.send({ assets_ids: ['123456789', 'not-a-token'], type: 'market' });
    c.send({ assets_ids: [], type: 'market' });
    c.send('PING');
    await c.until(() => c.texts.length > answers.length, 'the PONG');
    expect(c.texts[answers.length]).toBe('PONG');
    c.send({ assets_ids: [YES], operation: 'subscribe' });
    await c.untilClosed(30_000);
    expect([c.closeCode, c.closeReason]).toEqual([1000, 'replay finished']);
    const replayed = c.texts.slice(answers.length + 1);
    expect(JSON.parse(replayed[0] as string)).toMatchObject({ event_type: 'book', asset_id: YES, market: '' });
    const client = new ClobClient(YES);
    for (const t of replayed) client.consume(t);
    expect(client.hashesChecked).toBeGreaterThan(0);
  });

  it('only unknown assets: nothing is replayed, and the socket is closed 1008 when nothing replayable was subscribed in time, never a hang', async () => {
    const { first, last } = h.span('venue_a_clob');
    const c = await open('polymarket-clob', `from=${first}&to=${last}&speed=max`);
    c.send({ assets_ids: ['123456789'], type: 'market' });
    await c.untilClosed(30_000);
    expect([c.closeCode, c.closeReason, c.texts]).toEqual([1008, 'no subscribe to a replayable market within 2 s', []]);
  });

  /**
   * A socket on YES at a millionth of real time, once its replay has started (its first book sent): the message after
   * that book is due long after the test has ended.
   */
  async function started(): Promise<WsTestClient> {
    const { first, last } = h.span('venue_a_clob');
    const c = await open('polymarket-clob', `from=${first}&to=${last}&speed=0.000001`);
    c.send({ assets_ids: [YES], type: 'market' });
    await c.until((m) => m.some((x) => x.event_type === 'book'), 'the first book');
    return c;
  }

  it('a subscribe after the replay started gets INVALID OPERATION; the replay goes on', async () => {
    const c = await started();
    const before = c.texts.length;
    c.send({ assets_ids: [NO], operation: 'subscribe' });
    await c.until(() => c.texts.length > before, 'the answer');
    expect(c.texts.slice(before)).toContain('INVALID OPERATION');
    c.send('PING');
    await c.until(() => c.texts.includes('PONG'), 'the PONG');
    expect(c.ws.readyState).toBe(c.ws.OPEN);
    c.ws.close();
  });

  it('a socket whose every asset is unsubscribed after the start finishes then, not when its next message was due', async () => {
    const c = await started();
    const before = c.texts.length;
    c.send({ assets_ids: [YES], operation: 'unsubscribe' });
    await c.untilClosed(10_000);
    expect([c.closeCode, c.closeReason]).toEqual([1000, 'replay finished']);
    // Nothing of the asset after its unsubscribe.
    expect(c.texts.slice(before)).toEqual([]);
  });

  it('a window before the caller’s (anonymous: the last day) closes 1008 naming its start', async () => {
    const { first } = h.span('venue_a_clob');
    const c = await open('polymarket-clob', `from=${first}&to=${first + 10}`, null);
    c.send({ assets_ids: [YES], type: 'market' });
    await c.untilClosed(30_000);
    expect(c.closeCode).toBe(1008);
    expect(c.closeReason).toBe(
      `from is before the start of your window, ${new Date(h.now - 86_400_000).toISOString()}`,
    );
  });
});

describe('the Polymarket platforms’ names', () => {
  it('the CLOB is venue-a-clob or polymarket-clob; polymarket alone is the gateway’s Gamma platform (404, naming the replayed ones)', async () => {
    const { first } = h.span('venue_a_clob');
    const query = `from=${first}&to=${first + 1}&speed=max`;
    const subscribes: [string, unknown][] = [
      ['venue-a-clob', { assets_ids: [YES], type: 'market' }],
      ['POLYMARKET-CLOB', { assets_ids: [YES], type: 'market' }],
      [
        'venue-a-us',
        { subscribe: { requestId: 'md', subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA', marketSlugs: [SLUG] } },
      ],
      [
        'polymarket-us',
        { subscribe: { requestId: 'md', subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA', marketSlugs: [SLUG] } },
      ],
    ];
    for (const [name, subscribe] of subscribes) {
      const c = await open(name, query);
      c.send(subscribe);
      await c.untilClosed(30_000);
      expect([name, c.closeCode, c.texts.length > 0]).toEqual([name, 1000, true]);
    }
    const r = await WsTestClient.refused(h.wsUrl('polymarket', query), { headers: { 'X-API-Key': h.key } });
    expect(r.status).toBe(404);
    expect(r.json).toEqual({
      error: 'unknown_platform',
      message: expect.stringMatching(/^venue-a is not a recorded venue; .*venue-a-clob.*venue-a-us/),
    });
  });
});

describe('Polymarket US over /ws/replay/v1/polymarket-us', () => {
  const MD = 'SUBSCRIPTION_TYPE_MARKET_DATA';
  const TRADE = 'SUBSCRIPTION_TYPE_TRADE';
  const subscribe = (requestId: string, subscriptionType: string, marketSlugs: unknown[]) => ({
    subscribe: { requestId, subscriptionType, marketSlugs },
  });

  it('each subscription gets its kind of messages under its requestId; books equal /book, trades /trades', async () => {
    const { first, last } = h.span('venue_a_us');
    const to = first + Math.floor((last - first) / 2);
    const c = await open('polymarket-us', `from=${first}&to=${to}&speed=max`);
    c.send(subscribe('books', MD, [SLUG]));
    c.send(subscribe('trades', TRADE, [SLUG]));
    c.send(subscribe('books-again', MD, [SLUG.toUpperCase()]));
    await c.untilClosed(30_000);
    expect([c.closeCode, c.closeReason]).toEqual([1000, 'replay finished']);
    const by = (id: string) => c.texts.filter((t) => (JSON.parse(t) as { requestId: string }).requestId === id);
    expect(by('books').length + by('trades').length + by('books-again').length).toBe(c.texts.length);
    // The second MARKET_DATA subscription (named in another case: the stored market) gets the same books.
    expect(by('books-again').map((t) => t.replace('"books-again"', '"books"'))).toEqual(by('books'));
    const client = new PmUsClient();
    for (const t of [...by('books'), ...by('trades')]) client.consume(t);
    expect(client.book()).toEqual(await h.historyBook('venue_a_us', to));
    expect(client.trades).toEqual(await h.historyTrades(pmUs, first, to));
    expect(client.trades.length).toBeGreaterThan(0);
  });

  it('a window crossing a recorded gap gets the whole book at the gap’s end (the feed’s reset)', async () => {
    const w = h.windows.get('venue_a_us') as RecordedWindow;
    const g = closedGap(w);
    const c = await open('polymarket-us', `from=${g.from - 1}&to=${g.to}&speed=max`);
    c.send(subscribe('md', MD, [SLUG]));
    await c.untilClosed(30_000);
    expect(c.closeCode).toBe(1000);
    const at = new Date(g.to).toISOString();
    const reset = c.texts.findIndex(
      (t) => (JSON.parse(t) as { marketData: { transactTime: string } }).marketData.transactTime === at,
    );
    expect(reset).toBeGreaterThan(0);
    const client = new PmUsClient();
    for (const t of c.texts.slice(0, reset + 1)) client.consume(t);
    expect(client.book()).toEqual(exactBook(g.book as NonNullable<RecordedGap['book']>));
  });

  it('bad messages get the venue’s error form and the socket stays open for a good subscribe', async () => {
    const { first } = h.span('venue_a_us');
    const c = await open('polymarket-us', `from=${first}&to=${first + 1000}&speed=max`);
    const cases: [unknown, Record<string, unknown>][] = [
      ['not json', { error: 'invalid message' }],
      [{ hello: 1 }, { error: 'unknown message' }],
      [{ subscribe: { subscriptionType: MD, marketSlugs: [SLUG] } }, { error: 'requestId is required' }],
      [subscribe('a', 'SUBSCRIPTION_TYPE_NOPE', [SLUG]), { requestId: 'a', error: 'unsupported subscriptionType' }],
      [
        subscribe('b', 'SUBSCRIPTION_TYPE_MARKET_DATA_LITE', [SLUG]),
        { requestId: 'b', error: expect.stringMatching(/^unsupported subscriptionType: the replay serves/) },
      ],
      [subscribe('c', MD, []), { requestId: 'c', error: 'marketSlugs is required' }],
      [
        subscribe(
          'd',
          MD,
          Array.from({ length: 101 }, () => SLUG),
        ),
        { requestId: 'd', error: 'too many marketSlugs (max 100)' },
      ],
      [subscribe('e', MD, [SLUG, 'never-recorded']), { requestId: 'e', error: 'market not found: never-recorded' }],
      [{ unsubscribe: { requestId: 'e' } }, { requestId: 'e', error: 'subscription not found' }],
    ];
    for (const [i, [message, answer]] of cases.entries()) {
      c.send(message);
      await c.until((m) => m.length > i, `the answer to case ${i}`);
      expect(c.messages[i]).toEqual(answer);
    }
    c.send(subscribe('md', MD, [SLUG]));
    await c.untilClosed(30_000);
    expect([c.closeCode, c.closeReason]).toEqual([1000, 'replay finished']);
    expect(c.messages[cases.length]).toMatchObject({ requestId: 'md', subscriptionType: MD });
  });

  it('a subscribe after the start, and a window before the caller’s, are refused in the venue’s form', async () => {
    const { first, last } = h.span('venue_a_us');
    const c = await open('polymarket-us', `from=${first}&to=${last}&speed=0.000001`);
    c.send(subscribe('md', MD, [SLUG]));
    await c.until((m) => m.length > 0, 'the first book');
    c.send(subscribe('late', TRADE, [SLUG]));
    await c.until((m) => m.some((x) => x.requestId === 'late'), 'the answer');
    expect(c.messages.find((x) => x.requestId === 'late')).toEqual({
      requestId: 'late',
      error: expect.stringContaining('has started'),
    });
    c.ws.close();

    const anonymous = await open('polymarket-us', `from=${first}&to=${first + 10}`, null);
    anonymous.send(subscribe('md', MD, [SLUG]));
    await anonymous.until((m) => m.length > 0, 'the answer');
    expect(anonymous.messages[0]).toEqual({
      requestId: 'md',
      error: expect.stringContaining(new Date(h.now - 86_400_000).toISOString()),
    });
    anonymous.ws.close();
  });
});

describe('the examples of docs/replay.md against the replay (services/replay/examples, run as processes)', () => {
  const example = async (file: string, args: string[]) => {
    const { stdout } = await run(process.execPath, [path.join(repoRoot, 'services/replay/examples', file), ...args], {
      env: { ...process.env, REPLAY_URL: h.url.replace('http:', 'ws:'), DEPTHGATE_KEY: h.key },
      timeout: 60_000,
    });
    return JSON.parse(stdout.trim().split('\n').pop() as string) as Record<string, unknown>;
  };
  /** A book, best first, as `[price, size]` canonical texts, or as numbers (as ccxt keeps them). */
  const levels = (book: ExactBook, numbers = false) => {
    const side = (m: Map<string, bigint>, sign: number) =>
      [...m]
        .sort(([a], [b]) => sign * (Number(b) - Number(a)))
        .map(([p, q]) => (numbers ? [Number(p), Number(formatDecimal(q))] : [p, formatDecimal(q)]));
    return { bids: side(book.bids, 1), asks: side(book.asks, -1) };
  };
  const canonical = (l: unknown) =>
    (l as [string, string][]).map(([p, q]) => [formatDecimal(parseDecimal(p)), formatDecimal(parseDecimal(q))]);

  it('polymarket-clob.mjs (a plain ws bot verifying every hash) ends with both tokens’ books and trades', async () => {
    const { first, last } = h.span('venue_a_clob');
    const out = (await example('polymarket-clob.mjs', [
      `${YES},${NO}`,
      new Date(first).toISOString(),
      new Date(last).toISOString(),
    ])) as {
      close: unknown;
      books: Record<string, { bids: unknown; asks: unknown }>;
      trades: number;
      hashes: { checked: number; wrong: number };
    };
    expect(out.close).toEqual([1000, 'replay finished']);
    expect(out.hashes.wrong).toBe(0);
    expect(out.hashes.checked).toBeGreaterThan(200);
    let trades = 0;
    for (const asset of [YES, NO]) {
      const book = await h.historyBook('venue_a_clob', last, asset);
      const got = out.books[asset];
      if (book !== undefined && got !== undefined)
        expect({ bids: canonical(got.bids), asks: canonical(got.asks) }).toEqual(levels(book));
      trades += (await h.historyTrades(clob, first, last, asset)).length;
    }
    expect(out.trades).toBe(trades);
  }, 90_000);

  it('ccxt prediction.polymarket, pointed at the replay, holds the history’s book and trades', async () => {
    const { first, last } = h.span('venue_a_clob');
    const out = await example('ccxt-polymarket.mjs', [YES, String(first), String(last)]);
    const book = (await h.historyBook('venue_a_clob', last)) as ExactBook;
    expect({ bids: out.bids, asks: out.asks }).toEqual(levels(book, true));
    const trades = (await h.historyTrades(clob, first, last)).map((k) => {
      const [ts, price, size, side] = k.split('|');
      return [Number(ts), Number(price), Number(size), side];
    });
    expect(trades.length).toBeGreaterThan(0);
    expect(out.trades).toEqual(trades);
  }, 90_000);

  it.each(['polymarket-us.mjs', 'polymarket-us-official.mjs'])(
    '%s ends with the history’s book and trades',
    async (file) => {
      const { first, last } = h.span('venue_a_us');
      const out = await example(file, [SLUG, new Date(first).toISOString(), new Date(last).toISOString()]);
      if (out.close !== undefined) expect(out.close).toEqual([1000, 'replay finished']);
      const book = (await h.historyBook('venue_a_us', last)) as ExactBook;
      expect({ bids: canonical(out.bids), asks: canonical(out.asks) }).toEqual(levels(book));
      const trades = await h.historyTrades(pmUs, first, last);
      expect(trades.length).toBeGreaterThan(0);
      if (typeof out.trades === 'number') expect(out.trades).toBe(trades.length);
      else {
        const got = (out.trades as [number, string, string][]).map(([ts, p, q]) => [ts, ...canonical([[p, q]])[0]!]);
        expect(got).toEqual(
          trades.map((k) => {
            const [ts, price, size] = k.split('|');
            return [Number(ts), price, size];
          }),
        );
      }
    },
    90_000,
  );
});
