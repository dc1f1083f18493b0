/**
 * The history service's catalogue lookups (cached briefly in-process) and ticker lists, over the store's
 * OrderBookQueries, each under a request's QueryScope.
 */
import type { ExchangeKey } from '@depthgate/auth';
import type { OrderBookQueries, QueryScope, RowKind, TickerSpan } from '@depthgate/history-store';
import type { HistoryMetrics } from './metrics';
import type { KindSpan } from './planner';

export interface CatalogueEntry {
  /** The ticker as stored (the request may have used another case). */
  ticker: string;
  spans: Partial<Record<RowKind, KindSpan>>;
}

interface CachedEntry {
  entry: CatalogueEntry | null;
  expires: number;
}

const CACHE_MAX_ENTRIES = 20_000;

export class CatalogueCache {
  private readonly cache = new Map<string, CachedEntry>();

  constructor(
    private readonly queries: OrderBookQueries,
    private readonly metrics: HistoryMetrics,
    private readonly cacheTtlMs: number,
  ) {}

  /**
   * The catalogue entry of a ticker, matched exactly or, failing that, case-insensitively when exactly one stored
   * ticker matches. null when the exchange has no such ticker.
   */
  async catalogueEntry(exchange: ExchangeKey, ticker: string, scope: QueryScope): Promise<CatalogueEntry | null> {
    const key = `${exchange}\n${ticker}`;
    const now = Date.now();
    const cached = this.cache.get(key);
    if (cached && cached.expires > now) {
      this.metrics.catalogueCache.inc({ result: 'hit' });
      return cached.entry;
    }
    this.metrics.catalogueCache.inc({ result: 'miss' });
    const rows = await this.queries.catalogue(scope, exchange, ticker);
    const names = [...new Set(rows.map((r) => r.ticker))];
    const name = names.includes(ticker) ? ticker : names.length === 1 ? names[0] : undefined;
    let entry: CatalogueEntry | null = null;
    if (name !== undefined) {
      entry = { ticker: name, spans: {} };
      for (const r of rows) {
        if (r.ticker !== name) continue;
        entry.spans[r.kind] = { firstTs: r.firstTs, lastTs: r.lastTs, rows: r.rows };
      }
    }
    if (this.cacheTtlMs > 0) {
      if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.clear();
      this.cache.set(key, { entry, expires: now + this.cacheTtlMs });
    }
    return entry;
  }

  /** Tickers of an exchange passing both prefix filters, in byte order, with their data span. */
  tickers(
    exchange: ExchangeKey,
    filters: { prefix?: string; allowedPrefixes?: readonly string[] | null },
    scope: QueryScope,
  ): Promise<TickerSpan[]> {
    return this.queries.tickers(scope, exchange, filters);
  }
}
