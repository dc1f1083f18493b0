// https://docs.polymarket.us/api-reference/events/get-events (protos/gateway/events/v1/events.proto)
import type { PmEventDef } from './catalog';

/** The query parameters of `GET /v1/events` the simulator honours (upstreams.md §3, [V]). */
export interface EventsQuery {
  limit: number;
  offset: number;
  active?: boolean;
  closed?: boolean;
  archived?: boolean;
  featured?: boolean;
  live?: boolean;
  ended?: boolean;
  ids: string[];
  slugs: string[];
  tagSlug?: string;
  categories: string[];
  seriesIds: number[];
  /** `tagIds` (repeated): events carrying any of these tags. */
  tagIds: number[];
  /** `excludeTagId` (repeated): events carrying none of these tags. */
  excludeTagIds: number[];
  startDateMin?: number;
  startDateMax?: number;
  endDateMin?: number;
  endDateMax?: number;
  liquidityMin?: number;
  liquidityMax?: number;
  volumeMin?: number;
  volumeMax?: number;
  orderBy: string[];
  orderDirection: 'asc' | 'desc';
}

/** `orderBy` (repeated fields, applied in turn) and `orderDirection` of a Polymarket US listing. */
export interface Order {
  orderBy: string[];
  orderDirection: 'asc' | 'desc';
}

/** Default page size. [U] not documented. */
export const DEFAULT_EVENTS_LIMIT = 20;

const ORDER_FIELDS = [
  'id',
  'title',
  'slug',
  'startDate',
  'endDate',
  'createdAt',
  'liquidity',
  'volume',
  'featuredOrder',
] as const;

export type ParseResult = { ok: true; query: EventsQuery } | { ok: false; message: string };

/** The grpc-gateway's message for a query value it cannot parse (answered as a 400, code 3). */
const failure = (name: string, value: string, type: string) => ({
  ok: false as const,
  message: `parsing field "${name}": invalid ${type} "${value}"`,
});

/** The paging and status flags every Polymarket US listing shares: `limit`, `offset` (int32) and booleans. */
export interface ListQuery<F extends string> {
  limit: number;
  offset: number;
  flags: Partial<Record<F, boolean>>;
}

/** Parses `limit`, `offset` and the boolean `flags` as the grpc-gateway does (`true|false|1|0`; else a 400). */
export function parseListQuery<F extends string>(
  params: URLSearchParams,
  flags: readonly F[],
  defaultLimit = DEFAULT_EVENTS_LIMIT,
): { ok: true; query: ListQuery<F> } | { ok: false; message: string } {
  const q: ListQuery<F> = { limit: defaultLimit, offset: 0, flags: {} };
  for (const name of ['limit', 'offset'] as const) {
    const v = params.get(name);
    if (v === null || v === '') continue;
    if (!/^\d+$/.test(v) || Number(v) > 2 ** 31 - 1) return failure(name, v, 'int32');
    q[name] = Number(v);
  }
  for (const name of flags) {
    const v = params.get(name);
    if (v === null || v === '') continue;
    if (v !== 'true' && v !== 'false' && v !== '1' && v !== '0') return failure(name, v, 'bool');
    q.flags[name] = v === 'true' || v === '1';
  }
  return { ok: true, query: q };
}

/** A repeated int32 parameter (`seriesId`, `tagIds`, `filters.id`): every value an int32, else a 400. */
export function parseInt32s(
  params: URLSearchParams,
  name: string,
): { ok: true; values: number[] } | { ok: false; message: string } {
  const values: number[] = [];
  for (const v of params.getAll(name)) {
    if (!/^-?\d{1,10}$/.test(v) || Number(v) > 2 ** 31 - 1 || Number(v) < -(2 ** 31)) return failure(name, v, 'int32');
    values.push(Number(v));
  }
  return { ok: true, values };
}

/** Parses `orderBy` (each one of `fields`, else a 400 naming them) and `orderDirection` (`asc`, the default, or `desc`). */
export function parseOrder(
  params: URLSearchParams,
  fields: readonly string[],
): { ok: true; order: Order } | { ok: false; message: string } {
  const order: Order = { orderBy: params.getAll('orderBy'), orderDirection: 'asc' };
  for (const f of order.orderBy) {
    if (!fields.includes(f))
      return { ok: false, message: `invalid orderBy field "${f}" (one of ${fields.join(', ')})` };
  }
  const dir = params.get('orderDirection');
  if (dir !== null && dir !== '') {
    if (dir !== 'asc' && dir !== 'desc') return failure('orderDirection', dir, 'direction (asc or desc)');
    order.orderDirection = dir;
  }
  return { ok: true, order };
}

/**
 * Sorts `items` in place by `order` (a no-op without `orderBy`): field by field as `value` reads them, ties by `id`
 * ascending.
 */
export function sortByOrder<T>(
  items: T[],
  order: Order,
  value: (item: T, field: string) => number | string,
  id: (item: T) => number,
): T[] {
  if (!order.orderBy.length) return items;
  const sign = order.orderDirection === 'desc' ? -1 : 1;
  return items.sort((a, b) => {
    for (const f of order.orderBy) {
      const va = value(a, f);
      const vb = value(b, f);
      if (va < vb) return -sign;
      if (va > vb) return sign;
    }
    return id(a) - id(b);
  });
}

/** Parses the query like the gateway's grpc-gateway does: repeated keys are arrays, bad values are 400s. */
export function parseEventsQuery(params: URLSearchParams): ParseResult {
  const list = parseListQuery(params, ['active', 'closed', 'archived', 'featured', 'live', 'ended'] as const);
  if (!list.ok) return list;
  const order = parseOrder(params, ORDER_FIELDS);
  if (!order.ok) return order;
  const seriesIds = parseInt32s(params, 'seriesId');
  if (!seriesIds.ok) return seriesIds;
  const tagIds = parseInt32s(params, 'tagIds');
  if (!tagIds.ok) return tagIds;
  const excludeTagIds = parseInt32s(params, 'excludeTagId');
  if (!excludeTagIds.ok) return excludeTagIds;
  const q: EventsQuery = {
    ...list.query.flags,
    limit: list.query.limit,
    offset: list.query.offset,
    ids: params.getAll('id'),
    slugs: params.getAll('slug'),
    categories: params.getAll('categories'),
    seriesIds: seriesIds.values,
    tagIds: tagIds.values,
    excludeTagIds: excludeTagIds.values,
    ...order.order,
  };
  const tagSlug = params.get('tagSlug');
  if (tagSlug) q.tagSlug = tagSlug;
  for (const name of ['startDateMin', 'startDateMax', 'endDateMin', 'endDateMax'] as const) {
    const v = params.get(name);
    if (v === null || v === '') continue;
    const ms = Date.parse(v);
    if (Number.isNaN(ms)) return failure(name, v, 'date');
    q[name] = ms;
  }
  for (const name of ['liquidityMin', 'liquidityMax', 'volumeMin', 'volumeMax'] as const) {
    const v = params.get(name);
    if (v === null || v === '') continue;
    const n = Number(v);
    if (!Number.isFinite(n)) return failure(name, v, 'double');
    q[name] = n;
  }
  return { ok: true, query: q };
}

const value = (e: PmEventDef, field: string): number | string => {
  switch (field) {
    case 'id':
      return Number(e.id);
    case 'title':
      return e.title;
    case 'slug':
      return e.slug;
    case 'startDate':
      return Date.parse(e.startDate);
    case 'endDate':
      return Date.parse(e.endDate);
    case 'createdAt':
      return Date.parse(e.createdAt);
    case 'liquidity':
      return e.liquidityCents;
    case 'volume':
      return e.volumeCents;
    default:
      return e.featured ? 0 : 1;
  }
};

/** Applies every filter, the ordering, then offset and limit. */
export function filterEvents(events: readonly PmEventDef[], q: EventsQuery): PmEventDef[] {
  const cats = q.categories.map((c) => c.toLowerCase());
  const out = events.filter((e) => {
    if (q.active !== undefined && e.active !== q.active) return false;
    if (q.closed !== undefined && e.closed !== q.closed) return false;
    if (q.archived !== undefined && e.archived !== q.archived) return false;
    if (q.featured !== undefined && e.featured !== q.featured) return false;
    if (q.live !== undefined && e.live !== q.live) return false;
    if (q.ended !== undefined && e.ended !== q.ended) return false;
    if (q.ids.length && !q.ids.includes(e.id)) return false;
    if (q.slugs.length && !q.slugs.includes(e.slug)) return false;
    if (q.tagSlug !== undefined && !e.tags.some((t) => t.slug === q.tagSlug)) return false;
    if (q.tagIds.length && !e.tags.some((t) => q.tagIds.includes(Number(t.id)))) return false;
    if (q.excludeTagIds.length && e.tags.some((t) => q.excludeTagIds.includes(Number(t.id)))) return false;
    if (cats.length && !cats.includes(e.category.toLowerCase())) return false;
    if (q.seriesIds.length && !q.seriesIds.includes(Number(e.series.id))) return false;
    const start = Date.parse(e.startDate);
    const end = Date.parse(e.endDate);
    if (q.startDateMin !== undefined && start < q.startDateMin) return false;
    if (q.startDateMax !== undefined && start > q.startDateMax) return false;
    if (q.endDateMin !== undefined && end < q.endDateMin) return false;
    if (q.endDateMax !== undefined && end > q.endDateMax) return false;
    // Liquidity and volume are dollars on the wire; compared in cents to stay exact.
    if (q.liquidityMin !== undefined && e.liquidityCents < q.liquidityMin * 100) return false;
    if (q.liquidityMax !== undefined && e.liquidityCents > q.liquidityMax * 100) return false;
    if (q.volumeMin !== undefined && e.volumeCents < q.volumeMin * 100) return false;
    if (q.volumeMax !== undefined && e.volumeCents > q.volumeMax * 100) return false;
    return true;
  });
  sortByOrder(out, q, value, (e) => Number(e.id));
  return out.slice(q.offset, q.offset + q.limit);
}
