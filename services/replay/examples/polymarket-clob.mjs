/**
 * A plain WebSocket bot on the replay of Polymarket's CLOB market channel (docs/replay.md, "WebSocket replay
 * (Polymarket CLOB)"): it talks to the replay exactly as to wss://ws-subscriptions-clob.polymarket.com/ws/market,
 * keeps each asset's book by the channel's rules, verifies the `hash` of every `book` and `price_change` entry with
 * Polymarket's recipe (SHA-1 of the book's summary), and counts the trades. At the end (close 1000 "replay finished")
 * it prints each asset's book, best first, as JSON.
 *
 *   DEPTHGATE_KEY=dg_… node services/replay/examples/polymarket-clob.mjs <token id>[,<token id>…] 2026-03-07T10:00:00Z 2026-03-07T11:00:00Z
 *
 * REPLAY_URL: the replay service (default ws://127.0.0.1:7083); SPEED: `max` (default), `1` (real time), any factor.
 */
import { createHash } from 'node:crypto';
import WebSocket from 'ws';

const [assetList = '', from, to] = process.argv.slice(2);
const assets = assetList.split(',').filter((a) => a !== '');
const base = process.env.REPLAY_URL ?? 'ws://127.0.0.1:7083';
const query = new URLSearchParams({ from, to, speed: process.env.SPEED ?? 'max' });
const key = process.env.DEPTHGATE_KEY;
const ws = new WebSocket(`${base}/ws/replay/v1/polymarket-clob?${query}`, {
  headers: key ? { 'X-API-Key': key } : {},
});

/** Per asset: its levels (price text → size text), what the hash covers besides them, and the last trade price. */
const books = new Map();
let trades = 0;
const hashes = { checked: 0, wrong: 0 };

/** Polymarket's book hash: SHA-1 of the summary in the server's field order, bids ascending, asks descending. */
function summaryHash(asset, b, timestamp) {
  const side = (levels, sign) =>
    [...levels].sort(([a], [c]) => sign * (Number(a) - Number(c))).map(([price, size]) => ({ price, size }));
  const summary = {
    market: b.market,
    asset_id: asset,
    timestamp,
    hash: '',
    bids: side(b.bids, 1),
    asks: side(b.asks, -1),
    min_order_size: b.min_order_size,
    tick_size: b.tick_size,
    neg_risk: b.neg_risk,
    last_trade_price: b.last_trade_price,
  };
  return createHash('sha1').update(JSON.stringify(summary)).digest('hex');
}

function check(asset, b, timestamp, hash) {
  hashes.checked++;
  if (summaryHash(asset, b, timestamp) !== hash) hashes.wrong++;
}

function onEvent(e) {
  if (e.event_type === 'book') {
    const b = {
      bids: new Map(e.bids.map((l) => [l.price, l.size])),
      asks: new Map(e.asks.map((l) => [l.price, l.size])),
      market: e.market,
      min_order_size: e.min_order_size,
      tick_size: e.tick_size,
      neg_risk: e.neg_risk,
      last_trade_price: e.last_trade_price,
    };
    books.set(e.asset_id, b);
    check(e.asset_id, b, e.timestamp, e.hash);
  } else if (e.event_type === 'price_change') {
    for (const c of e.price_changes) {
      const b = books.get(c.asset_id);
      if (!b) continue;
      const side = c.side === 'BUY' ? b.bids : b.asks;
      if (Number(c.size) === 0) side.delete(c.price);
      else side.set(c.price, c.size);
      check(c.asset_id, b, e.timestamp, c.hash);
    }
  } else if (e.event_type === 'last_trade_price') {
    trades++;
    const b = books.get(e.asset_id);
    if (b) b.last_trade_price = e.price;
  }
}

ws.on('open', () => ws.send(JSON.stringify({ assets_ids: assets, type: 'market' })));

ws.on('message', (data) => {
  const text = String(data);
  if (text === 'PONG') return;
  if (text === 'INVALID OPERATION') return console.error(text);
  const events = JSON.parse(text);
  for (const e of Array.isArray(events) ? events : [events]) onEvent(e);
});

ws.on('close', (code, reason) => {
  const side = (levels, sign) => [...levels].sort(([a], [b]) => sign * (Number(b) - Number(a)));
  const out = {};
  for (const [asset, b] of books) out[asset] = { bids: side(b.bids, 1), asks: side(b.asks, -1) };
  console.log(JSON.stringify({ close: [code, String(reason)], books: out, trades, hashes }));
});
