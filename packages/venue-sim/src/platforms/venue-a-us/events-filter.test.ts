import { buildPmUsCatalog } from './catalog';
import { DEFAULT_EVENTS_LIMIT, filterEvents, parseEventsQuery } from './events-filter';

const catalog = buildPmUsCatalog(42, '2026-03-07', 16);
const run = (query: string) => {
  const parsed = parseEventsQuery(new URLSearchParams(query));
  if (!parsed.ok) throw new Error(parsed.message);
  return filterEvents(catalog.events, parsed.query);
};
const all = () => run(`limit=1000`);

describe('Polymarket US /v1/events filters', () => {
  test('the catalogue has open, closed, archived, featured and live events to tell apart', () => {
    const events = all();
    expect(events.some((e) => e.active)).toBe(true);
    expect(events.some((e) => e.closed)).toBe(true);
    expect(events.some((e) => e.archived)).toBe(true);
    expect(events.some((e) => e.featured)).toBe(true);
    expect(events.some((e) => e.live)).toBe(true);
  });

  test('limit (default and explicit) and offset', () => {
    expect(run('').length).toBe(Math.min(DEFAULT_EVENTS_LIMIT, catalog.events.length));
    expect(run('limit=3').map((e) => e.id)).toEqual(
      all()
        .slice(0, 3)
        .map((e) => e.id),
    );
    expect(run('limit=3&offset=2').map((e) => e.id)).toEqual(
      all()
        .slice(2, 5)
        .map((e) => e.id),
    );
  });

  test.each(['active', 'closed', 'archived', 'featured', 'live'] as const)('boolean filter %s', (flag) => {
    const yes = run(`limit=1000&${flag}=true`);
    const no = run(`limit=1000&${flag}=false`);
    expect(yes.length).toBeGreaterThan(0);
    expect(no.length).toBeGreaterThan(0);
    expect(yes.every((e) => e[flag])).toBe(true);
    expect(no.every((e) => !e[flag])).toBe(true);
    expect(yes.length + no.length).toBe(all().length);
  });

  test('slug (repeated), tagSlug, categories (repeated) and seriesId (repeated)', () => {
    const [a, b] = all();
    expect(run(`slug=${a?.slug}&slug=${b?.slug}`).map((e) => e.slug)).toEqual([a?.slug, b?.slug]);
    const nba = run('limit=1000&tagSlug=nba');
    expect(nba.length).toBeGreaterThan(0);
    expect(nba.every((e) => e.tags.some((t) => t.slug === 'nba'))).toBe(true);
    const cats = run('limit=1000&categories=crypto&categories=economics');
    expect(new Set(cats.map((e) => e.category))).toEqual(new Set(['crypto', 'economics']));
    const series = run('limit=1000&seriesId=1&seriesId=4');
    expect(series.length).toBeGreaterThan(0);
    expect(series.every((e) => ['1', '4'].includes(e.series.id))).toBe(true);
    expect(run('limit=1000&seriesId=999')).toEqual([]);
  });

  test('tagIds (any of them) and excludeTagId (none of them), repeated', () => {
    const id = (slug: string) => catalog.tags.find((t) => t.slug === slug)?.id as string;
    const [nba, fed] = [id('nba'), id('fed')];
    const has = (e: (typeof catalog.events)[number], ...ids: string[]) => e.tags.some((t) => ids.includes(t.id));
    expect(run(`limit=1000&tagIds=${nba}`)).toEqual(all().filter((e) => has(e, nba)));
    expect(run(`limit=1000&tagIds=${nba}&tagIds=${fed}`)).toEqual(all().filter((e) => has(e, nba, fed)));
    expect(run(`limit=1000&excludeTagId=${nba}&excludeTagId=${fed}`)).toEqual(all().filter((e) => !has(e, nba, fed)));
    expect(run(`limit=1000&tagIds=${nba}`).length).toBeGreaterThan(0);
    expect(run(`limit=1000&excludeTagId=${nba}&excludeTagId=${fed}`).length).toBeGreaterThan(0);
  });

  test('start and end date bounds are inclusive', () => {
    const e = all()[0] as (typeof catalog.events)[number];
    const exact = run(`limit=1000&startDateMin=${e.startDate}&startDateMax=${e.startDate}`);
    expect(exact.map((x) => x.startDate).every((d) => d === e.startDate)).toBe(true);
    expect(exact.map((x) => x.id)).toContain(e.id);
    const later = run(`limit=1000&endDateMin=2026-03-09`);
    expect(later.every((x) => Date.parse(x.endDate) >= Date.parse('2026-03-09'))).toBe(true);
    expect(later.length).toBeLessThan(all().length);
    const before = run(`limit=1000&endDateMax=2026-03-01T00:00:00Z`);
    expect(before.length).toBeGreaterThan(0);
    expect(before.every((x) => Date.parse(x.endDate) <= Date.parse('2026-03-01T00:00:00Z'))).toBe(true);
  });

  test('liquidity and volume bounds, in dollars', () => {
    const sorted = all()
      .map((e) => e.liquidityCents)
      .sort((x, y) => x - y);
    const mid = (sorted[Math.floor(sorted.length / 2)] as number) / 100;
    const high = run(`limit=1000&liquidityMin=${mid}`);
    const low = run(`limit=1000&liquidityMax=${mid}`);
    expect(high.every((e) => e.liquidityCents >= mid * 100)).toBe(true);
    expect(low.every((e) => e.liquidityCents <= mid * 100)).toBe(true);
    expect(high.length + low.length).toBe(all().length + 1);
    const vol = run('limit=1000&volumeMin=1000000&volumeMax=5000000');
    expect(vol.every((e) => e.volumeCents >= 100_000_000 && e.volumeCents <= 500_000_000)).toBe(true);
  });

  test('orderBy and orderDirection', () => {
    const asc = run('limit=1000&orderBy=volume&orderDirection=asc').map((e) => e.volumeCents);
    expect(asc).toEqual([...asc].sort((x, y) => x - y));
    const desc = run('limit=1000&orderBy=volume&orderDirection=desc').map((e) => e.volumeCents);
    expect(desc).toEqual([...asc].reverse());
    const byStart = run('limit=1000&orderBy=startDate&orderBy=id').map((e) => Date.parse(e.startDate));
    expect(byStart).toEqual([...byStart].sort((x, y) => x - y));
  });

  test.each([
    ['limit=abc', /limit/],
    ['active=maybe', /active/],
    ['seriesId=x', /seriesId/],
    ['tagIds=nba', /tagIds/],
    ['excludeTagId=-', /excludeTagId/],
    ['seriesId=2147483648', /seriesId/],
    ['startDateMin=yesterday', /startDateMin/],
    ['liquidityMin=lots', /liquidityMin/],
    ['orderBy=nonsense', /orderBy/],
    ['orderDirection=up', /orderDirection/],
  ])('rejects %s', (query, message) => {
    const parsed = parseEventsQuery(new URLSearchParams(query));
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toMatch(message);
  });
});
