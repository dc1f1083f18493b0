// The venues the replay benchmark can drive, by the name `--venue` takes (a platform key or its alias, or the
// exchange key): the replay's platform and exchange, the venue's own subscribe message(s) for one market (what a bot
// sends to the venue itself: docs/replay.md), and how to tell the replay's replies to them (acks) from the
// recorded messages, which the benchmark counts. A venue whose WebSocket replay is not written yet is refused by the
// replay's handshake (404 unknown_platform), and the benchmark says so.
const kalshi = {
  name: 'Kalshi',
  platform: 'venue-b',
  exchange: 'venue_b',
  subscribe: (ticker) => [
    { id: 1, cmd: 'subscribe', params: { channels: ['orderbook_delta', 'trade'], market_ticker: ticker } },
  ],
  isAck: (text) => text.includes('"type":"subscribed"'),
};

const gemini = {
  name: 'Gemini',
  platform: 'venue-c',
  exchange: 'venue_c',
  subscribe: (ticker) => [{ type: 'subscribe', subscriptions: [{ name: 'l2', symbols: [ticker] }] }],
  isAck: () => false,
};

const coinbase = {
  name: 'Coinbase',
  platform: 'venue-d',
  exchange: 'venue_d',
  subscribe: (ticker) => [{ type: 'subscribe', product_ids: [ticker], channels: ['level2', 'matches'] }],
  isAck: (text) => text.startsWith('{"type":"subscriptions"'),
};

const clob = {
  name: 'Polymarket CLOB',
  platform: 'venue-a-clob',
  exchange: 'venue_a_clob',
  subscribe: (ticker) => [{ assets_ids: [ticker], type: 'market' }],
  isAck: () => false,
};

const us = {
  name: 'Polymarket US',
  platform: 'venue-a-us',
  exchange: 'venue_a_us',
  subscribe: (ticker) => [
    { subscribe: { requestId: 'book', subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA', marketSlugs: [ticker] } },
    { subscribe: { requestId: 'trades', subscriptionType: 'SUBSCRIPTION_TYPE_TRADE', marketSlugs: [ticker] } },
  ],
  isAck: () => false,
};

const BY_NAME = new Map();
for (const [venue, names] of [
  [kalshi, ['kalshi']],
  [gemini, ['gemini']],
  [coinbase, ['coinbase']],
  [clob, ['polymarket', 'polymarket-clob']],
  [us, ['polymarket-us', 'polymarket_us']],
]) {
  for (const n of [...names, venue.platform, venue.exchange]) BY_NAME.set(n, venue);
}

export function venueNamed(name) {
  const venue = BY_NAME.get(String(name).toLowerCase());
  if (!venue) throw new Error(`--venue: unknown venue ${name}; one of ${[...new Set(BY_NAME.keys())].join(', ')}`);
  return venue;
}
