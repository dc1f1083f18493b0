// https://docs.polymarket.us/api-reference/websocket/markets
/**
 * Polymarket US (`venue-a-us`): the markets WebSocket, `wss://api.polymarket.us/v1/ws/markets` [V].
 *
 * Clients speak its protocol: `{"subscribe":{"requestId","subscriptionType","marketSlugs":[…],
 * "responsesDebounced"?}}` (types `SUBSCRIPTION_TYPE_MARKET_DATA`, `_MARKET_DATA_LITE`, `_TRADE`; at most 100 markets
 * [V]) and `{"unsubscribe":{"requestId"}}`; every message carries the client's own `requestId`; errors are
 * `{"requestId","error"}`; `{"heartbeat":{}}` keeps the connection alive. Upstream, the handshake carries the
 * Ed25519 headers over `GET /v1/ws/markets` [V]; each (type, market) is one upstream subscription with the gateway's
 * own request id. A market-data message is the market's whole book [V], so the gateway keeps the last one: a client
 * joining later gets it at once, re-framed with its `requestId`, and a lost message heals with the next one.
 * polymarket-us's `ws` sends no header but its own, so the gateway also takes the caller's depthgate key as the
 * library's key id (`X-PM-Access-Key`).
 */
import { parseObject, stringList } from '@depthgate/feeds';
import { feedHandshakeHeaders, type Platforms } from '@depthgate/platforms';
import {
  noticeDoc,
  type ClientContext,
  type Notice,
  type ResyncReason,
  type StreamModule,
  type Subscriber,
  type Topic,
  type UpstreamContext,
  type UpstreamSession,
} from './types';

const PM_US_TYPES = [
  'SUBSCRIPTION_TYPE_MARKET_DATA',
  'SUBSCRIPTION_TYPE_MARKET_DATA_LITE',
  'SUBSCRIPTION_TYPE_TRADE',
] as const;
/** [V] at most 100 markets per subscription. */
const MAX_SLUGS = 100;
const SLUG = /^[a-z0-9][a-z0-9._-]{0,199}$/i;
const REQUEST_ID = /^[\x20-\x7e]{1,200}$/;

interface PmUsSub {
  requestId: string;
}

/** The topic's channel: the subscription type, debounced or not (the upstream sends either). */
function channelOf(type: string, debounced: boolean): string {
  return debounced ? `${type}:debounced` : type;
}

const framed = (requestId: string, tail: string) => `{"requestId":${JSON.stringify(requestId)},${tail}`;

class PmUsUpstream implements UpstreamSession {
  private next = 1;
  private readonly byRequest = new Map<string, Topic>();

  constructor(private readonly ctx: UpstreamContext) {}

  subscribe(topics: readonly Topic[]): void {
    for (const t of topics) {
      const requestId = `dg-${this.next++}`;
      t.ref = requestId;
      this.byRequest.set(requestId, t);
      const [type, debounced] = t.channel.split(':');
      this.ctx.send(
        JSON.stringify({
          subscribe: {
            requestId,
            subscriptionType: type,
            marketSlugs: [t.market],
            ...(debounced ? { responsesDebounced: true } : {}),
          },
        }),
      );
      // Trades have no snapshot: the topic is live as soon as it is asked for.
      if (type === 'SUBSCRIPTION_TYPE_TRADE') this.ctx.live(t);
    }
  }

  unsubscribe(topics: readonly Topic[]): void {
    for (const t of topics) {
      const requestId = t.ref as string | undefined;
      if (requestId === undefined) continue;
      this.byRequest.delete(requestId);
      t.ref = undefined;
      this.ctx.send(JSON.stringify({ unsubscribe: { requestId } }));
    }
  }

  resync(topic: Topic): void {
    this.unsubscribe([topic]);
    this.subscribe([topic]);
  }

  onMessage(text: string): void {
    const m = JSON.parse(text) as Record<string, unknown>;
    if (typeof m !== 'object' || m === null || 'heartbeat' in m) return;
    const requestId = m.requestId;
    const t = typeof requestId === 'string' ? this.byRequest.get(requestId) : undefined;
    if (!t) return;
    if ('error' in m) return this.ctx.fail(t, { message: String(m.error) });
    const { requestId: _own, ...rest } = m;
    if (Object.keys(rest).length === 0) return;
    // Everything after the request id, serialised once for every subscriber.
    const tail = JSON.stringify(rest).slice(1);
    const out = (sub: Subscriber) => framed((sub.handle as PmUsSub).requestId, tail);
    if (t.channel.startsWith('SUBSCRIPTION_TYPE_TRADE')) return this.ctx.deliver(t, out);
    t.state = tail;
    if (t.status === 'live') {
      t.version++;
      this.ctx.deliver(t, out);
    } else {
      this.ctx.snapshot(t, out);
    }
  }
}

class PmUsClient {
  private readonly subs = new Map<string, Subscriber<PmUsSub>[]>();

  constructor(private readonly ctx: ClientContext<PmUsSub>) {}

  private error(requestId: unknown, error: string): void {
    this.ctx.send(JSON.stringify({ ...(typeof requestId === 'string' ? { requestId } : {}), error }));
  }

  async onMessage(text: string): Promise<void> {
    const m = parseObject(text);
    if (!m) return this.error(undefined, 'invalid message: expected a JSON object');
    if (m.subscribe && typeof m.subscribe === 'object') return this.subscribe(m.subscribe as Record<string, unknown>);
    if (m.unsubscribe && typeof m.unsubscribe === 'object') {
      const requestId = (m.unsubscribe as Record<string, unknown>).requestId;
      const subs = typeof requestId === 'string' ? this.subs.get(requestId) : undefined;
      if (!subs) return this.error(requestId, 'subscription not found');
      this.subs.delete(requestId as string);
      this.ctx.detach(subs);
      return;
    }
    this.error(undefined, 'unknown message: expected subscribe or unsubscribe');
  }

  private async subscribe(s: Record<string, unknown>): Promise<void> {
    const requestId = s.requestId;
    if (typeof requestId !== 'string' || !REQUEST_ID.test(requestId))
      return this.error(undefined, 'requestId is required');
    const type = s.subscriptionType;
    if (!(PM_US_TYPES as readonly unknown[]).includes(type))
      return this.error(requestId, 'unsupported subscriptionType');
    const slugs = stringList(s.marketSlugs);
    if (!slugs || slugs.length === 0) return this.error(requestId, 'marketSlugs is required');
    if (slugs.length > MAX_SLUGS) return this.error(requestId, `too many marketSlugs (max ${MAX_SLUGS})`);
    const bad = slugs.find((x) => !SLUG.test(x));
    if (bad !== undefined) return this.error(requestId, `invalid market slug "${bad.slice(0, 100)}"`);
    const unique = [...new Set(slugs)];
    // The same requestId again replaces that subscription, as the platform does: its places go to the new markets,
    // and only those beyond them are asked of the key's limit (the gateway's upstream room, for all of them).
    // Refused, the old subscription stays as it was. The hub may drop some of the old ones while we wait (their
    // places go back at once): those are asked for again, until what is held and reserved covers the new markets.
    let reserved = 0;
    let topics = unique.length;
    for (;;) {
      const held = Math.min((this.subs.get(requestId) ?? []).length, unique.length);
      const need = Math.max(0, unique.length - held - reserved);
      if (need === 0 && topics === 0) break;
      const refused = await this.ctx.reserve(need, topics);
      if (refused !== undefined) {
        if (reserved > 0) this.ctx.release(reserved);
        return this.error(requestId, `depthgate: ${refused}`);
      }
      reserved += need;
      topics = 0;
    }
    const old = this.subs.get(requestId) ?? [];
    this.subs.delete(requestId);
    this.ctx.detach(old, unique.length - reserved);
    const channel = channelOf(type as string, s.responsesDebounced === true);
    const h: PmUsSub = { requestId };
    this.subs.set(
      requestId,
      unique.map((slug) => this.ctx.attach(channel, slug, h)),
    );
  }

  dropped(sub: Subscriber<PmUsSub>): void {
    const list = this.subs.get(sub.handle.requestId);
    if (!list) return;
    const rest = list.filter((x) => x !== sub);
    if (rest.length > 0) this.subs.set(sub.handle.requestId, rest);
    else this.subs.delete(sub.handle.requestId);
  }
}

export const venueAUsStream: StreamModule<Platforms['venue-a-us']> = {
  docs: {
    send: [
      {
        name: 'subscribe',
        summary: 'MARKET_DATA, MARKET_DATA_LITE or TRADE for at most 100 markets; the same requestId replaces',
        example: {
          subscribe: {
            requestId: 'md-1',
            subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA',
            marketSlugs: ['btc-above-100k-on-march-31-2026'],
          },
        },
      },
      { name: 'unsubscribe', summary: 'Ends a subscription', example: { unsubscribe: { requestId: 'md-1' } } },
    ],
    receive: [
      {
        name: 'marketData',
        summary:
          'The whole book of a market, every change (the client’s requestId); a late joiner gets the last one at once',
        example: {
          requestId: 'md-1',
          subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA',
          marketData: {
            marketSlug: 'btc-above-100k-on-march-31-2026',
            bids: [{ px: { value: '0.410', currency: 'USD' }, qty: '1926.00' }],
            offers: [],
          },
        },
      },
      { name: 'heartbeat', summary: 'Every 10 s', example: { heartbeat: {} } },
      noticeDoc(
        'depthgateNotice',
        {
          requestId: 'md-1',
          depthgateNotice: {
            notice: 'stale',
            reason: 'upstream_stall',
            marketSlug: 'btc-above-100k-on-march-31-2026',
          },
        },
        ['depthgateNotice'],
      ),
      {
        name: 'error',
        summary: 'The platform’s error form',
        example: { requestId: 'md-1', error: 'too many marketSlugs (max 100)' },
      },
    ],
  },
  channels: ['markets'],
  paths: ['/v1/ws/markets'],
  keyHeader: 'x-pm-access-key',
  limits: {
    topicsPerConnection: 500,
    maxConnections: 10,
    connectsPerSecond: 2,
    // [V] 20 requests per second per key; the WebSocket's own message limit is not documented [U].
    messagesPerSecond: 20,
    source: 'Polymarket US: 100 markets per subscription, 20 requests/s per key [V]; WebSocket limits [U]',
  },
  create(ctx) {
    const signer = ctx.platform.signer;
    const feedUrl = ctx.platform.feeds.main;
    return {
      handshake: (nowMs) => ({ url: feedUrl, headers: feedHandshakeHeaders(signer, feedUrl, nowMs) }),
      keepAlive: 'ping',
      clientHeartbeat: {
        message: () => '{"heartbeat":{}}',
      },
      // [V] the markets WebSocket requires an API key, even for market data.
      unavailable: signer
        ? undefined
        : 'Polymarket US streams need POLYMARKET_US_ACCESS_KEY and POLYMARKET_US_SECRET_KEY on the gateway',
      openSession: (c) => new PmUsUpstream(c),
      openClient: (c) => new PmUsClient(c as ClientContext<PmUsSub>),
      join(topic: Topic, sub: Subscriber): string | undefined {
        return typeof topic.state === 'string' ? framed((sub.handle as PmUsSub).requestId, topic.state) : undefined;
      },
      notice(sub: Subscriber, notice: Notice, reason: ResyncReason): string {
        return JSON.stringify({
          requestId: (sub.handle as PmUsSub).requestId,
          depthgateNotice: { notice, reason, marketSlug: sub.topic.market },
        });
      },
      failed(sub: Subscriber, error: { message: string }): string {
        return JSON.stringify({ requestId: (sub.handle as PmUsSub).requestId, error: error.message });
      },
    };
  },
};
