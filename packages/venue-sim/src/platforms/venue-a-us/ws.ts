// https://docs.polymarket.us/api-reference/websocket/markets
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { parsePmUsRequest, pmUsWire, type PmUsSubscriptionType } from '@depthgate/feeds';
import type { BookEngine } from '../../book/engine';
import type { BookEvent, Instrument } from '../../book/types';
import { type FeedConnection, FeedHub, rawText } from '../../feeds/feed-hub';
import type { AuthCheck, AuthInput, RecordedRequest } from '../../http/types';
import { marketData, marketDataLite } from './rest';
import { pmUsTrade } from './trades';

export const PM_US_WS_PATH = '/v1/ws/markets';

type SubType = PmUsSubscriptionType;

interface Sub {
  requestId: string;
  type: SubType;
  slugs: Set<string>;
}

/**
 * The markets WebSocket on api.polymarket.us [V]: the handshake carries the same Ed25519 headers as REST (signed
 * path `/v1/ws/markets`); `SUBSCRIPTION_TYPE_MARKET_DATA` sends the whole book of a market on every change, levels
 * best first, `px.value` with 3 decimals, `qty` with 2; `transactTime` carries the change's millisecond.
 * `SUBSCRIPTION_TYPE_TRADE` sends a `trade` per fill of the books, after the book message of its event (trades.ts).
 */
export class PmUsFeed {
  readonly hub: FeedHub;
  private readonly bySlug = new Map<string, Set<{ conn: FeedConnection; sub: Sub }>>();

  constructor(
    private readonly engine: BookEngine,
    private readonly verify: (input: AuthInput) => AuthCheck,
    heartbeatIntervalMs: number,
    clock: () => number,
  ) {
    // No sequence on this feed [V]: a swap of two messages is invisible but for `transactTime`.
    this.hub = new FeedHub(clock, { reorder: true });
    engine.on('venue-a-us', (inst, event) => this.onEvent(inst, event));
    this.hub.startHeartbeat(heartbeatIntervalMs, (c) => this.hub.send(c, pmUsWire.heartbeat()));
  }

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, record: RecordedRequest): void {
    if (record.path !== PM_US_WS_PATH) {
      FeedHub.refuse(socket, record, 404, JSON.stringify({ code: 5, message: 'Not Found', details: [] }));
      return;
    }
    const check = this.verify({
      method: 'GET',
      path: record.path,
      query: record.query,
      headers: req.headers,
      body: Buffer.alloc(0),
    });
    record.auth = check.state;
    if (check.error) record.authError = check.error;
    if (check.state !== 'valid') {
      FeedHub.refuse(socket, record, 401, JSON.stringify({ code: 16, message: 'Unauthorized', details: [] }));
      return;
    }
    this.hub.accept(req, socket, head, record, (conn) => {
      const subs = new Map<string, Sub>();
      conn.state = subs;
      conn.onMessage((data) => this.onMessage(conn, subs, rawText(data)));
      conn.ws.on('close', () => {
        for (const s of subs.values()) this.unindex(conn, s);
      });
    });
  }

  private error(conn: FeedConnection, requestId: unknown, error: string): void {
    this.hub.send(conn, pmUsWire.error(requestId, error));
  }

  private onMessage(conn: FeedConnection, subs: Map<string, Sub>, text: string): void {
    const r = parsePmUsRequest(text);
    if (r.kind === 'error') return this.error(conn, r.requestId, r.error);
    if (r.kind === 'subscribe') {
      const { requestId, slugs } = r;
      const unknown = slugs.find((x) => !this.engine.book('venue-a-us', x));
      if (unknown !== undefined) return this.error(conn, requestId, `market not found: ${unknown}`);
      const old = subs.get(requestId);
      // A request id subscribed again replaces its markets.
      let held = 0;
      for (const s of subs.values()) if (s !== old) held += s.slugs.size;
      if (!this.hub.admits(held, new Set(slugs).size))
        return this.error(
          conn,
          requestId,
          `too many subscriptions: the simulator holds ${this.hub.maxSubscriptions} markets on a connection`,
        );
      if (old) this.unindex(conn, old);
      const sub: Sub = { requestId, type: r.type, slugs: new Set(slugs) };
      subs.set(requestId, sub);
      for (const slug of sub.slugs) {
        let set = this.bySlug.get(slug);
        if (!set) this.bySlug.set(slug, (set = new Set()));
        set.add({ conn, sub });
        conn.tickers.add(slug);
        if (sub.type !== 'SUBSCRIPTION_TYPE_TRADE')
          this.hub.send(conn, this.frame(sub, this.body(sub.type, slug, this.lastTs(slug))));
      }
      return;
    }
    const sub = typeof r.requestId === 'string' ? subs.get(r.requestId) : undefined;
    if (!sub) return this.error(conn, r.requestId, 'subscription not found');
    subs.delete(sub.requestId);
    this.unindex(conn, sub);
  }

  private unindex(conn: FeedConnection, sub: Sub): void {
    for (const slug of sub.slugs) {
      const set = this.bySlug.get(slug);
      if (!set) continue;
      for (const e of set) if (e.sub === sub && e.conn === conn) set.delete(e);
      if (set.size === 0) this.bySlug.delete(slug);
    }
  }

  private lastTs(slug: string): number | null {
    return this.engine.lastTs('venue-a-us', slug) ?? null;
  }

  /** The message without its leading `{"requestId":…,`, serialised once per change and shared by subscribers. */
  private body(type: SubType, slug: string, ts: number | null): string {
    if (type === 'SUBSCRIPTION_TYPE_MARKET_DATA') {
      return pmUsWire.body(type, 'marketData', JSON.stringify(marketData(this.engine, slug, ts)));
    }
    return pmUsWire.body(type, 'marketDataLite', JSON.stringify(marketDataLite(this.engine, slug)));
  }

  private frame(sub: Sub, body: string): string {
    return pmUsWire.frame(sub.requestId, body);
  }

  private onEvent(inst: Instrument, event: BookEvent): void {
    const subs = this.bySlug.get(inst.ticker);
    if (!subs || subs.size === 0) return;
    let books = false;
    let trades = false;
    for (const { sub } of subs) {
      if (sub.type === 'SUBSCRIPTION_TYPE_TRADE') trades = true;
      else books = true;
    }
    // A drop fault drops one message for every subscriber: the book's, or one trade's; a reorder swaps the next two.
    const conns = new Set<FeedConnection>();
    for (const { conn } of subs) conns.add(conn);
    /** Each connection's frames of one message (one per subscription of the kind it concerns). */
    const frames = (text: (sub: Sub) => string | undefined) => {
      const out = new Map<FeedConnection, string[]>();
      for (const { conn, sub } of subs) {
        const t = text(sub);
        if (t === undefined) continue;
        const list = out.get(conn);
        if (list) list.push(t);
        else out.set(conn, [t]);
      }
      return (conn: FeedConnection) => out.get(conn);
    };
    if (books) {
      this.hub.publish(inst.ticker, conns, () => {
        let full: string | undefined;
        let lite: string | undefined;
        return frames((sub) => {
          if (sub.type === 'SUBSCRIPTION_TYPE_MARKET_DATA')
            return this.frame(sub, (full ??= this.body(sub.type, inst.ticker, event.ts)));
          if (sub.type === 'SUBSCRIPTION_TYPE_MARKET_DATA_LITE')
            return this.frame(sub, (lite ??= this.body(sub.type, inst.ticker, event.ts)));
          return undefined;
        });
      });
    }
    if (!trades) return;
    for (const t of event.trades) {
      this.hub.publish(inst.ticker, conns, () => {
        const body = pmUsWire.body(
          'SUBSCRIPTION_TYPE_TRADE',
          'trade',
          pmUsTrade.ws(inst, { ...t, ts: event.ts, seq: event.seq }),
        );
        return frames((sub) => (sub.type === 'SUBSCRIPTION_TYPE_TRADE' ? this.frame(sub, body) : undefined));
      });
    }
  }

  close(): void {
    this.hub.close();
    this.bySlug.clear();
  }
}
