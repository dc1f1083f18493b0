// https://docs.gemini.com/websocket-api/#market-data-version-2
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { geminiWire, parseGeminiSubscribe, valueText } from '@depthgate/feeds';
import { formatScaled } from '../../core/decimal';
import type { BookEngine } from '../../book/engine';
import { BID, type BookEvent, type Instrument, type TimedTrade } from '../../book/types';
import { type FeedConnection, FeedHub, parseJsonObject } from '../../feeds/feed-hub';
import type { RecordedRequest } from '../../http/types';
import type { GeminiCatalog } from './catalog';
import type { GeminiTrades } from './trades';

/** Trades the first `l2_updates` of a symbol carries [V]: "the last 50 trades". */
const INITIAL_TRADES = 50;

export const GEMINI_WS_PATH = '/v2/marketdata';

/**
 * Market Data v2 `l2` ([U] URL, [V] format): public; after `subscribe`, the first `l2_updates` of a symbol carries
 * the whole book and the last 50 trades (newest first [U]), later ones only changed levels with their new absolute
 * quantity ("0" removes the level); each trade then comes as its own `trade` message, after the `l2_updates` of
 * the levels it took (trades.ts). No sequence numbers and no timestamps on book changes (only on trades).
 */
export class GeminiFeed {
  readonly hub: FeedHub;
  private readonly bySymbol = new Map<string, Set<FeedConnection>>();

  constructor(
    private readonly engine: BookEngine,
    private readonly catalog: GeminiCatalog,
    private readonly trades: GeminiTrades,
    heartbeatIntervalMs: number,
    private readonly clock: () => number,
  ) {
    // market data v2 carries no sequence [V]: a swap of two messages is invisible.
    this.hub = new FeedHub(clock, { reorder: true });
    engine.on('venue-c', (inst, event) => this.onEvent(inst, event));
    this.hub.startHeartbeat(heartbeatIntervalMs, (c) => this.hub.send(c, geminiWire.heartbeat(this.clock())));
  }

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, record: RecordedRequest): void {
    if (record.path !== GEMINI_WS_PATH) {
      FeedHub.refuse(
        socket,
        record,
        404,
        JSON.stringify({ result: 'error', reason: 'EndpointNotFound', message: 'not found' }),
      );
      return;
    }
    this.hub.accept(req, socket, head, record, (conn) => {
      conn.onMessage((data) => this.onMessage(conn, parseJsonObject(data)));
      conn.ws.on('close', () => {
        for (const s of conn.tickers) this.bySymbol.get(s)?.delete(conn);
      });
    });
  }

  private onMessage(conn: FeedConnection, m: Record<string, unknown> | undefined): void {
    const parsed = parseGeminiSubscribe(m);
    if ('error' in parsed) return this.hub.send(conn, geminiWire.error(parsed.error.reason, parsed.error.message));
    for (const raw of parsed.symbols) {
      const inst = typeof raw === 'string' ? this.catalog.bySymbol.get(raw.toUpperCase()) : undefined;
      if (!inst) {
        this.hub.send(conn, geminiWire.error('InvalidSymbol', `invalid symbol ${valueText(raw)}`));
        continue;
      }
      if (parsed.type === 'unsubscribe') {
        conn.tickers.delete(inst.ticker);
        this.bySymbol.get(inst.ticker)?.delete(conn);
        continue;
      }
      if (conn.tickers.has(inst.ticker)) continue;
      conn.tickers.add(inst.ticker);
      let set = this.bySymbol.get(inst.ticker);
      if (!set) this.bySymbol.set(inst.ticker, (set = new Set()));
      set.add(conn);
      this.hub.send(conn, this.fullBook(inst));
    }
  }

  private fullBook(inst: Instrument): string {
    const book = this.engine.book('venue-c', inst.ticker);
    const changes: string[] = [];
    if (book) {
      for (const [side, levels] of [
        ['buy', book.bids.levels()],
        ['sell', book.asks.levels()],
      ] as const) {
        for (const [p, q] of levels)
          changes.push(geminiWire.change(side, formatScaled(p, inst.priceDecimals), formatScaled(q, inst.qtyDecimals)));
      }
    }
    const trades: string[] = [];
    const log = this.engine.tradeLog('venue-c', inst.ticker);
    for (let no = log?.lastTradeNo ?? 0; log && no >= log.firstTradeNo && trades.length < INITIAL_TRADES; no--) {
      trades.push(this.trades.ws(inst, log.trade(no) as TimedTrade));
    }
    return geminiWire.initial(inst.ticker, changes, trades);
  }

  private onEvent(inst: Instrument, event: BookEvent): void {
    const conns = this.bySymbol.get(inst.ticker);
    if (!conns || conns.size === 0) return;
    // A drop fault drops one message: the book's, or one trade's; a reorder swaps the symbol's next two.
    this.hub.publish(inst.ticker, conns, () => this.changes(inst, event));
    for (const t of event.trades) {
      this.hub.publish(inst.ticker, conns, () => this.trades.ws(inst, { ...t, ts: event.ts, seq: event.seq }));
    }
  }

  private changes(inst: Instrument, event: BookEvent): string {
    const ch = event.changes;
    const changes: string[] = [];
    for (let i = 0; i < ch.length; i += 4) {
      const q = ch[i + 2] as number;
      const price = formatScaled(ch[i + 1] as number, inst.priceDecimals);
      changes.push(
        geminiWire.change(ch[i] === BID ? 'buy' : 'sell', price, q === 0 ? '0' : formatScaled(q, inst.qtyDecimals)),
      );
    }
    return geminiWire.updates(inst.ticker, changes);
  }

  close(): void {
    this.hub.close();
    this.bySymbol.clear();
  }
}
