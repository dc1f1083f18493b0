// https://docs.polymarket.us/api-reference/websocket/markets
/**
 * Polymarket US (`venue_a_us`): `wss://api.polymarket.us/v1/ws/markets` [V].
 *
 * - The handshake carries the Ed25519 headers of the REST API, signed over `timestamp + GET + /v1/ws/markets` [V];
 *   without credentials Polymarket US is not recorded.
 * - `{"subscribe":{"requestId","subscriptionType":"SUBSCRIPTION_TYPE_MARKET_DATA","marketSlugs":[…]}}`, at most 100
 *   markets per subscription [V]. Every MARKET_DATA message is the market's whole book (`bids`/`offers`,
 *   `px.value`, `qty`) with `transactTime` [V]: the first after a subscription is stored as the venue's snapshot,
 *   every later one is diffed against our book into signed deltas, stamped with its `transactTime` (ms).
 * - `responsesDebounced` (RECORDER_POLYMARKET_US_DEBOUNCED, default false [U]): a debounced stream may merge
 *   changes, which the history would then not show one by one.
 * - No sequence numbers: a lost message cannot be seen, but the next whole book repairs our book (its changes land
 *   at the later message's time). `{"heartbeat":{}}` keeps the connection alive.
 *
 * A book whose `transactTime` is T includes the change at T, so the first book holds from T + 1 ms.
 */
import { parseObject } from '@depthgate/feeds';
import { envBool } from '@depthgate/service-kit';
import { defineAdapter } from './adapter';
import type { RestClient } from './rest';
import { chunk, type RestBook, type SessionContext, type FeedProtocol, type VenueSession } from './types';

interface PmLevel {
  px?: { value?: unknown };
  qty?: unknown;
}

function levels(list: unknown): [string, string][] {
  if (!Array.isArray(list)) return [];
  const out: [string, string][] = [];
  for (const l of list as PmLevel[]) {
    const p = l?.px?.value;
    const q = l?.qty;
    if (typeof p === 'string' && typeof q === 'string') out.push([p, q]);
  }
  return out;
}

function transactTime(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? undefined : ms;
}

class VenueAUsSession implements VenueSession {
  private nextRequest = 1;
  private readonly requests = new Map<string, Set<string>>();
  private readonly requestOf = new Map<string, string>();
  private readonly expecting = new Set<string>();
  private mark = -1;

  constructor(
    private readonly ctx: SessionContext,
    private readonly batch: number,
    private readonly debounced: boolean,
  ) {}

  watermark(): number {
    return this.mark;
  }

  private send(requestId: string, slugs: readonly string[]): void {
    for (const s of slugs) this.expecting.add(s);
    this.ctx.send(
      JSON.stringify({
        subscribe: {
          requestId,
          subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA',
          marketSlugs: slugs,
          responsesDebounced: this.debounced,
        },
      }),
    );
  }

  subscribe(tickers: readonly string[]): void {
    for (const part of chunk(tickers, this.batch)) {
      const requestId = `dg-md-${this.nextRequest++}`;
      this.requests.set(requestId, new Set(part));
      for (const s of part) this.requestOf.set(s, requestId);
      this.send(requestId, part);
    }
  }

  unsubscribe(tickers: readonly string[]): void {
    const touched = new Set<string>();
    for (const s of tickers) {
      const id = this.requestOf.get(s);
      this.requestOf.delete(s);
      this.expecting.delete(s);
      if (id === undefined) continue;
      this.requests.get(id)?.delete(s);
      touched.add(id);
    }
    for (const id of touched) {
      const rest = this.requests.get(id);
      if (!rest || rest.size === 0) {
        this.requests.delete(id);
        this.ctx.send(JSON.stringify({ unsubscribe: { requestId: id } }));
      } else {
        // Subscribing again under the same id replaces its market list; the markets kept get a first book, which
        // matches ours (no gap).
        this.send(id, [...rest]);
      }
    }
  }

  resync(tickers: readonly string[]): void {
    const ids = new Set(tickers.map((s) => this.requestOf.get(s)).filter((id): id is string => id !== undefined));
    for (const id of ids) this.send(id, [...(this.requests.get(id) ?? [])]);
  }

  onMessage(text: string, receivedAt: number): void {
    const m = parseObject(text);
    if (!m) return;
    const data = m.marketData as Record<string, unknown> | undefined;
    if (data && typeof data === 'object') {
      const slug = typeof data.marketSlug === 'string' ? data.marketSlug : '';
      const rec = this.ctx.ticker(slug);
      if (rec === undefined) return;
      const venueTs = transactTime(data.transactTime);
      const bids = levels(data.bids);
      const asks = levels(data.offers);
      if (this.expecting.delete(slug)) {
        rec.venueSnapshot(bids, asks, { ts: venueTs !== undefined ? venueTs + 1 : receivedAt, receivedAt });
        return;
      }
      const ts = venueTs ?? receivedAt;
      if (ts > this.mark) this.mark = ts;
      const t = rec.beginEvent(ts, receivedAt);
      if (t < 0) return;
      rec.applyWholeBook(t, bids, asks);
      return;
    }
    if (typeof m.error === 'string') {
      const unknown = /market not found: (\S+)/i.exec(m.error)?.[1];
      if (unknown !== undefined && this.requestOf.has(unknown)) {
        this.ctx.rejectTicker(unknown, m.error);
        this.unsubscribe([unknown]);
        return;
      }
      this.ctx.logger.warn({ error: m.error, requestId: m.requestId }, 'Polymarket US feed error');
    }
    // {"heartbeat":{}}: liveness only.
  }

  close(): void {
    this.requests.clear();
    this.requestOf.clear();
    this.expecting.clear();
  }
}

interface PmMarket {
  slug?: unknown;
  active?: unknown;
  closed?: unknown;
}

export function venueAUsProtocol(o: { subscribeBatch: number; debounced: boolean }): FeedProtocol {
  const open = (m: PmMarket) => typeof m.slug === 'string' && m.active !== false && m.closed !== true;
  return {
    venueClock: true,
    signedHandshake: true,
    createSession: (ctx) => new VenueAUsSession(ctx, Math.min(100, o.subscribeBatch), o.debounced),
    async listActive(rest: RestClient, series: readonly string[], all: boolean): Promise<string[]> {
      const out = new Set<string>();
      const page = 100;
      if (all) {
        for (let offset = 0; offset < 1_000_000; offset += page) {
          const body = (await rest.json(`/v1/markets?active=true&closed=false&limit=${page}&offset=${offset}`)) as {
            markets?: PmMarket[];
          };
          const markets = body.markets ?? [];
          for (const m of markets) if (open(m)) out.add(m.slug as string);
          if (markets.length < page) break;
        }
      }
      if (series.length > 0) {
        const wanted = new Set(series.map((s) => s.toLowerCase()));
        for (let offset = 0; offset < 1_000_000; offset += page) {
          const body = (await rest.json(`/v1/events?active=true&closed=false&limit=${page}&offset=${offset}`)) as {
            events?: { series?: { id?: unknown; slug?: unknown }; seriesSlug?: unknown; markets?: PmMarket[] }[];
          };
          const events = body.events ?? [];
          for (const e of events) {
            const names = [e.series?.slug, e.series?.id, e.seriesSlug].map((v) => String(v ?? '').toLowerCase());
            if (!names.some((n) => n !== '' && wanted.has(n))) continue;
            for (const m of e.markets ?? []) if (open(m)) out.add(m.slug as string);
          }
          if (events.length < page) break;
        }
      }
      return [...out];
    },
    async restBook(rest: RestClient, ticker: string): Promise<RestBook> {
      const body = (await rest.json(`/v1/markets/${encodeURIComponent(ticker)}/book`)) as {
        marketData?: { bids?: unknown; offers?: unknown };
      };
      return { bids: levels(body.marketData?.bids), asks: levels(body.marketData?.offers) };
    },
    normalizeTicker: (t) => t,
  };
}

/**
 * The recorder's adapter of Polymarket US: 20 requests per second, so 10. The public host serves listings and books
 * without authentication [V]; the feed needs the Ed25519 credentials.
 */
export const venueAUsRecorder = defineAdapter({
  restRate: 10,
  reconcile: false,
  settings: {
    /** Polymarket US `responsesDebounced` [U]. */
    RECORDER_POLYMARKET_US_DEBOUNCED: envBool(false),
  },
  protocol: (ctx) =>
    venueAUsProtocol({
      subscribeBatch: ctx.subscribeBatch,
      debounced: ctx.settings.RECORDER_POLYMARKET_US_DEBOUNCED,
    }),
});
