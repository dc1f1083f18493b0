// The official clients' WebSocket parts through the gateway's WebSocket proxy, unchanged, as docs/websockets.md
// tells users to point them: ccxt pro coinbaseexchange and gemini `watchOrderBook`, ccxt prediction.polymarket
// `watchOrderBook`, polymarket-us `ws.markets()`. Each book must become the venue's (the simulator's truth).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import dns from 'node:dns';
import { after, before, describe, it } from 'node:test';
import ccxt from 'ccxt';
import { PolymarketUS } from 'polymarket-us';
import type { RunningGateway } from '@depthgate/gateway';
import type { Simulator } from '@depthgate/venue-sim';
import { BASE_DOMAIN, startContractStack, type ContractStack } from './stack.ts';

let stack: ContractStack;
let sim: Simulator;
let gateway: RunningGateway;
let key: string;
let rest: string;
let ws: string;
const originalLookup = dns.lookup;

before(async () => {
  stack = await startContractStack('ws-contract', { heartbeatIntervalMs: 500 });
  ({ sim, gateway, key } = stack);
  rest = `http://127.0.0.1:${gateway.port}/api/v1`;
  ws = `ws://127.0.0.1:${gateway.port}/ws/v1`;
  // What a user does where `*.gw.test` (their GATEWAY_BASE_DOMAIN) is not in DNS: resolve it to the gateway.
  (dns as { lookup: unknown }).lookup = ((host: string, options: unknown, callback: unknown) =>
    host.endsWith(`.${BASE_DOMAIN}`)
      ? typeof options === 'function'
        ? (options as (e: null, a: string, f: number) => void)(null, '127.0.0.1', 4)
        : (options as { all?: boolean }).all
          ? (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [
              { address: '127.0.0.1', family: 4 },
            ])
          : (callback as (e: null, a: string, f: number) => void)(null, '127.0.0.1', 4)
      : (originalLookup as (...a: unknown[]) => void)(host, options, callback)) as typeof dns.lookup;
});

after(async () => {
  (dns as { lookup: unknown }).lookup = originalLookup;
  await stack?.close();
});

/** The venue's book (best first) as numbers, as ccxt holds it. */
function venue(platform: string, market: string, depth = 5) {
  const b = sim.books.book(platform, market);
  const n = (levels: [string, string][]) => levels.slice(0, depth).map(([p, q]) => [Number(p), Number(q)]);
  return { bids: n(b.bids), asks: n(b.asks) };
}

/** Steps the venue until `market` has moved `n` times. */
function move(platform: string, market: string, n: number): void {
  const target = sim.books.last(platform, market).seq + n;
  while (sim.books.last(platform, market).seq < target) sim.books.step(5);
}

/** Watches the first book, lets the venue move, then watches until the book equals the venue's again. */
async function watchUntilVenue(
  watch: () => Promise<{ bids: number[][]; asks: number[][] }>,
  platform: string,
  market: string,
): Promise<void> {
  await watch();
  move(platform, market, 20);
  const deadline = Date.now() + 15_000;
  for (;;) {
    const book = await watch();
    const want = venue(platform, market);
    const got = { bids: book.bids.slice(0, 5), asks: book.asks.slice(0, 5) };
    if (JSON.stringify(got) === JSON.stringify(want)) return;
    if (Date.now() > deadline) assert.deepEqual(got, want);
    move(platform, market, 1);
  }
}

/** A counter of the gateway's, for one platform and reason. */
async function metric(name: string, platform: string, reason: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${gateway.port}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`${name}{`) && l.includes(`platform="${platform}"`) && l.includes(`reason="${reason}"`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

/** ccxt's WebSocket connections carry the key as a header (`options.ws.options.headers`). */
const wsHeaders = () => ({ ws: { options: { headers: { 'X-API-Key': key } } } });

describe('the official clients’ WebSocket parts, through the gateway', () => {
  it('ccxt pro coinbaseexchange watchOrderBook (level2 with placeholder credentials: the gateway signs)', async () => {
    const x = new ccxt.pro.coinbaseexchange({
      enableRateLimit: false,
      urls: { api: { public: `${rest}/venue-d`, private: `${rest}/venue-d`, ws: `${ws}/venue-d` } },
      headers: { 'X-API-Key': key },
      options: wsHeaders(),
      // ccxt refuses level2 without credentials of its own; the gateway ignores them and signs with its own.
      apiKey: 'placeholder',
      secret: randomBytes(32).toString('base64'),
      password: 'placeholder',
    });
    try {
      // ccxt wants this before its first plain ws:// connection (wss:// needs nothing).
      await x.loadHttpProxyAgent();
      await watchUntilVenue(() => x.watchOrderBook('BTC/USD') as never, 'coinbase', 'BTC-USD');
      // The feed goes silent beyond Coinbase's heartbeat rhythm (1 s + 500 ms): the gateway sends its notices
      // (`stale`, the fresh `snapshot`, `resynced`), which ccxt must take in its stride.
      const resyncs = () => metric('gateway_ws_resyncs_total', 'venue-d', 'upstream_stall');
      const before = await resyncs();
      assert.ok(sim.feedFaults.stall('venue-d', 2_500) > 0);
      await watchUntilVenue(() => x.watchOrderBook('BTC/USD') as never, 'coinbase', 'BTC-USD');
      assert.ok((await resyncs()) > before);
    } finally {
      await x.close();
    }
  });

  it('ccxt pro gemini watchOrderBook (ccxt appends /v2/marketdata to urls.api.ws)', async () => {
    const x = new ccxt.pro.gemini({
      enableRateLimit: false,
      urls: { api: { public: `${rest}/venue-c`, private: `${rest}/venue-c`, ws: `${ws}/venue-c` } },
      headers: { 'X-API-Key': key },
      options: { fetchCurrencies: { webApiEnable: false }, ...wsHeaders() },
    });
    try {
      await x.loadHttpProxyAgent();
      await watchUntilVenue(() => x.watchOrderBook('BTC/USD') as never, 'gemini', 'BTCUSD');
    } finally {
      await x.close();
    }
  });

  it('ccxt prediction.polymarket watchOrderBook (urls.api.ws is the market channel)', async () => {
    const token = sim.books.tickers('venue-a-clob')[0] as string;
    const x = new ccxt.prediction.polymarket({
      enableRateLimit: false,
      urls: {
        api: {
          gamma: `${rest}/venue-a`,
          clob: `${rest}/venue-a-clob`,
          data: `${rest}/venue-a-clob/data-api`,
          ws: `${ws}/venue-a-clob`,
          wsUser: `${ws}/venue-a-clob`,
        },
      },
      headers: { 'X-API-Key': key },
      options: wsHeaders(),
    });
    try {
      await x.loadHttpProxyAgent();
      // ccxt's polymarket book keeps the CLOB's order (best last); compared best first.
      const bestFirst = async () => {
        const b = (await x.watchOrderBook(token)) as unknown as { bids: number[][]; asks: number[][] };
        return { bids: b.bids, asks: b.asks };
      };
      await watchUntilVenue(bestFirst, 'venue-a-clob', token);
    } finally {
      await x.close();
    }
  });

  it('polymarket-us ws.markets(): apiBaseUrl {platform}.{domain}, the depthgate key as its keyId', async () => {
    const slug = sim.books.tickers('venue-a-us')[0] as string;
    const client = new PolymarketUS({
      // Its WebSocket URL is the origin of apiBaseUrl plus /v1/ws/markets; it sends only its own signed headers.
      apiBaseUrl: `http://venue-a-us.${BASE_DOMAIN}:${gateway.port}`,
      keyId: key,
      secretKey: randomBytes(32).toString('base64'),
    });
    const markets = client.ws.markets();
    const books: {
      bids: { px: { value: string }; qty: string }[];
      offers: { px: { value: string }; qty: string }[];
    }[] = [];
    markets.on('marketData', (m: { marketData: (typeof books)[number] }) => books.push(m.marketData));
    await markets.connect();
    try {
      markets.subscribeMarketData('md-1', [slug]);
      const deadline = Date.now() + 15_000;
      for (;;) {
        const last = books.at(-1);
        const want = sim.books.book('venue-a-us', slug);
        const got = last && {
          bids: last.bids.map((l) => [l.px.value, l.qty]),
          asks: last.offers.map((l) => [l.px.value, l.qty]),
        };
        if (got && JSON.stringify(got) === JSON.stringify({ bids: want.bids, asks: want.asks })) break;
        if (Date.now() > deadline) assert.deepEqual(got, want);
        move('venue-a-us', slug, 1);
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      markets.close();
    }
  });
});
