/**
 * The Explorer page in a real browser: Debian's Chromium (headless), driven by playwright-core, against the history
 * app on the real Redis and ClickHouse of `./dev test`, with generated books for one ticker per exchange and a
 * recorded gap. The page is @depthgate/explorer's build (packages/explorer/dist: `pnpm build` runs before the integration tests).
 *
 * Nothing here waits for a duration: every step waits for a state the page shows (an attribute, a text, a row).
 * Screenshots go to DG_SCREENSHOT_DIR (default .dev/artifacts/explorer; CI keeps them as artifacts).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { insertGapRows } from '@depthgate/history-store';
import { HistoryClient, formatTimestamp, parseTimestamp, type ServiceBook, type TradeRow } from '@depthgate/client';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { generateInto } from '@depthgate/history-tools';
import { createHarness, type Harness } from '../testing/harness';
import { explorerBuildDir } from './assets';
import { EXPLORER_CSP } from './routes';

const CHROMIUM = process.env.DG_CHROMIUM ?? '/usr/bin/chromium';
const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const SHOTS = process.env.DG_SCREENSHOT_DIR ?? path.join(ROOT, '.dev', 'artifacts', 'explorer');
const PAGE_DIR = explorerBuildDir();
/** The flags Debian's Chromium needs here (root, no GPU, no network but loopback). */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const TICKERS = {
  venue_b: 'KXBTCD-26JUN01-T95000',
  venue_c: 'ETHUSD',
  venue_a_us: 'will-bitcoin-close-above-100k-on-jun-30',
} as const;
type Exchange = keyof typeof TICKERS;
const EXCHANGES = Object.keys(TICKERS) as Exchange[];

let h: Harness;
let origin: string;
let client: HistoryClient;
let context: BrowserContext;
let profile: string;
let NOW: number;
/** The seeded gap, on venue_b's ticker. */
let GAP: { from: number; to: number };

jest.setTimeout(180_000);

beforeAll(async () => {
  if (!existsSync(path.join(PAGE_DIR, 'index.html'))) {
    throw new Error(`the Explorer page is not built in ${PAGE_DIR}: run pnpm build first`);
  }
  mkdirSync(SHOTS, { recursive: true });
  for (const f of readdirSync(SHOTS)) if (f.startsWith('failed-')) rmSync(path.join(SHOTS, f));
  h = await createHarness({
    // The page makes a few requests per moment; the anonymous budget of a test run is not what is tested here.
    env: { RATE_LIMIT_ANONYMOUS_RPM: '100000', RATE_LIMIT_DEFAULT_RPM: '100000' },
    explorerDir: PAGE_DIR,
  });
  NOW = h.clock.now;
  origin = (await h.listen()).url;
  client = new HistoryClient({ baseUrl: origin });
  const from = NOW - 3 * 3_600_000;
  await generateInto(h.ch, {
    tickers: EXCHANGES.map((exchange) => ({ exchange, ticker: TICKERS[exchange] })),
    from,
    to: NOW - 60_000,
    snapshotIntervalMs: 300_000,
    eventsPerMinute: 20,
    seed: 'explorer',
    batchRows: 1_000_000,
  });
  // The gap ends with a snapshot, as every gap the recorder writes does (the book restarts from it).
  const closing = await client.snapshotPage('venue_b', TICKERS.venue_b, {
    start: from + 95 * 60_000,
    limit: 1,
  });
  GAP = { from: from + 80 * 60_000 + 123, to: parseTimestamp(closing.rows[0]!.ts) };
  await insertGapRows(h.ch, [
    {
      exchange: 'venue_b',
      ticker: TICKERS.venue_b,
      from_ts: GAP.from,
      to_ts: GAP.to,
      reason: 'disconnect',
      detected_at: GAP.to + 1,
    },
  ]);
  profile = mkdtempSync(path.join(os.tmpdir(), 'dg-explorer-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
  });
});

afterAll(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  await h?.close();
});

/**
 * Pages open in the running test. Each test closes its pages when it passes; a page still open afterwards belongs to
 * a test that failed, and is kept as a screenshot (`failed-…`), with what its console said.
 */
const open = new Map<Page, { console: { type: string; text: string }[] }>();

afterEach(async () => {
  for (const [page, seen] of open) {
    if (page.isClosed()) continue;
    const name = `failed-${(expect.getState().currentTestName ?? 'test').replace(/[^\w]+/g, '-').slice(0, 80)}`;
    await shot(page, name).catch(() => undefined);
    process.stderr.write(`${name}.png; its console: ${JSON.stringify(seen.console).slice(0, 4000)}\n`);
    await page.close();
  }
  open.clear();
});

/** A page with everything it does recorded: console messages, page errors, every request. */
async function openPage(hash = '') {
  const page = await context.newPage();
  const seen = {
    console: [] as { type: string; text: string }[],
    errors: [] as string[],
    requests: [] as { url: string; headers: Record<string, string> }[],
  };
  page.on('console', (m) => seen.console.push({ type: m.type(), text: m.text() }));
  page.on('pageerror', (e) => seen.errors.push(e.message));
  page.on('request', (r) => seen.requests.push({ url: r.url(), headers: r.headers() }));
  open.set(page, seen);
  const response = await page.goto(`${origin}/explorer${hash}`);
  await page.waitForSelector('#ticker-count:not(:empty)');
  return { page, seen, response };
}

/** Console errors and warnings, less the browser's own line for an error status the test caused on purpose. */
function unexpected(seen: { console: { type: string; text: string }[]; errors: string[] }, allowStatus?: number) {
  return [
    ...seen.errors.map((e) => `pageerror: ${e}`),
    ...seen.console
      .filter((m) => m.type === 'error' || m.type === 'warning')
      .filter((m) => !(allowStatus && m.text.includes(`status of ${allowStatus}`)))
      .map((m) => `${m.type}: ${m.text}`),
  ];
}

/** Waits until the locator's element shows the text (Playwright's own waiting; no duration). */
async function hasText(l: Locator, text: string | RegExp): Promise<void> {
  await l.filter({ hasText: text }).first().waitFor({ state: 'attached' });
}

function offOrigin(seen: { requests: { url: string }[] }): string[] {
  return seen.requests.map((r) => r.url).filter((u) => new URL(u).origin !== origin);
}

async function shot(page: Page, name: string, fullPage = true) {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage });
}

/** A moment as the page writes it: `2026-11-23 11:33:48.630` (UTC). */
const showTime = (ts: string) => ts.replace('T', ' ').replace('Z', '');

/** Picks a ticker with the keyboard: ↓ opens the list with the first option active, Enter picks it. */
async function pickFirstTicker(page: Page): Promise<string> {
  const box = page.getByRole('combobox', { name: /Ticker/ });
  await box.focus();
  await box.press('ArrowDown');
  const first = page.locator('#ticker-list [role="option"]').first();
  await first.waitFor();
  const ticker = (await first.getAttribute('data-ticker')) ?? '';
  await box.press('Enter');
  return ticker;
}

/** Waits until the book shown is settled (not loading) for a moment other than `not`; returns its moment. */
async function settledBook(page: Page, not?: string): Promise<{ at: string; status: string }> {
  const book = page.locator(
    `.book[aria-busy="false"][data-at]:is([data-status="ok"],[data-status="in_gap"],[data-status="no_data"])${
      not === undefined ? '' : `:not([data-at="${not}"])`
    }`,
  );
  await book.waitFor({ state: 'attached' });
  return { at: (await book.getAttribute('data-at')) ?? '', status: (await book.getAttribute('data-status')) ?? '' };
}

/** The text of each cell of a table's body, row by row. */
async function tableRows(page: Page, selector: string): Promise<string[][]> {
  const rows = page.locator(`${selector} tbody tr`);
  const out: string[][] = [];
  for (let i = 0; i < (await rows.count()); i++) out.push(await rows.nth(i).locator('td').allTextContents());
  return out;
}

/** The levels table as the page shows it: bids and asks, best first. */
async function shownLevels(page: Page) {
  const bids: { price: string; quantity: string }[] = [];
  const asks: { price: string; quantity: string }[] = [];
  for (const c of await tableRows(page, '#levels')) {
    if (c[2]) bids.push({ price: c[2], quantity: c[1] ?? '' });
    if (c[3]) asks.push({ price: c[3], quantity: c[4] ?? '' });
  }
  return { bids, asks };
}

/** The book shown equals the book endpoint's answer for the moment and depth the page shows. */
async function expectBookMatchesEndpoint(page: Page, exchange: Exchange, ticker: string, at: string) {
  const depthText = await page.locator('.book').getAttribute('data-depth');
  const depth = depthText === 'all' ? undefined : Number(depthText);
  const answer: ServiceBook = await client.book(exchange, ticker, { at, depth });
  const status = await page.locator('.book').getAttribute('data-status');
  expect(status).toBe(answer.status);
  const shown = await shownLevels(page);
  expect(shown).toEqual({ bids: answer.bids ?? [], asks: answer.asks ?? [] });
  return { answer, shown };
}

describe('the Explorer page', () => {
  it('serves the page and its hashed assets with a strict CSP and long caching', async () => {
    const page = await fetch(`${origin}/explorer`, { headers: { 'accept-encoding': 'br' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(EXPLORER_CSP);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/); // no inline script
    expect(html).not.toMatch(/\sstyle=/); // no inline style
    const assets = [...html.matchAll(/(?:src|href)="(\/explorer\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
    expect(assets.some((a) => /\/index-[\w-]{8,}\.js$/.test(a))).toBe(true);
    expect(assets.some((a) => /\.css$/.test(a))).toBe(true);
    for (const a of assets) {
      const r = await fetch(`${origin}${a}`);
      expect(r.status).toBe(200);
      expect(r.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    }
    expect((await fetch(`${origin}/explorer/`, { redirect: 'manual' })).headers.get('location')).toBe('/explorer');
    expect((await fetch(`${origin}/explorer/assets/nope.js`)).status).toBe(404);
  });

  it('anonymously: each exchange’s first ticker, the seeded gap, the slider, the book = the endpoint, the changes', async () => {
    const { page, seen, response } = await openPage();
    expect(response?.headers()['content-security-policy']).toBe(EXPLORER_CSP);
    await hasText(page.locator('#caller-status'), /Anonymous/);

    for (const exchange of EXCHANGES) {
      await page.getByLabel('Exchange').selectOption(exchange);
      const listed = await client.tickers(exchange);
      await hasText(page.locator('#ticker-count'), `(${listed.length} with data in your window)`);
      const ticker = await pickFirstTicker(page);
      expect(ticker).toBe(listed[0]);
      expect(ticker).toBe(TICKERS[exchange]);
      await page.waitForSelector('.coverage[data-state="ready"]');
      const { at } = await settledBook(page);
      // The newest recorded moment first, and the address says what is shown.
      const coverage = await client.coverage(exchange, ticker);
      expect(at).toBe(
        formatTimestamp(
          Math.max(parseTimestamp(coverage.snapshots.last_ts!), parseTimestamp(coverage.deltas.last_ts!)),
        ),
      );
      expect(decodeURIComponent(new URL(page.url()).hash)).toBe(`#/${exchange}/${ticker}?at=${at}`);
      await expectBookMatchesEndpoint(page, exchange, ticker, at);
      await hasText(page.locator('#window-note'), 'anonymous callers see the last day');
      await shot(page, `explorer-${exchange}`);
    }

    // venue_b again: the timeline and the gaps table show the seeded gap; hovering its band names its reason.
    await page.getByLabel('Exchange').selectOption('venue_b');
    await page.waitForSelector('#ticker-count:not(:has-text("loading"))');
    await pickFirstTicker(page);
    await page.waitForSelector('.coverage[data-state="ready"]');
    let { at } = await settledBook(page);
    await page.waitForSelector('#timeline[data-gaps="1"]');
    const gapRow = page.locator('#gaps tbody tr[data-reason="disconnect"]');
    await hasText(gapRow, formatTimestamp(GAP.from).replace('T', ' ').replace('Z', ''));
    await hasText(gapRow, formatTimestamp(GAP.to).replace('T', ' ').replace('Z', ''));
    const range = {
      from: Number(await page.locator('#timeline').getAttribute('data-from')),
      to: Number(await page.locator('#timeline').getAttribute('data-to')),
    };
    const over = (await page.locator('#timeline .u-over').boundingBox())!;
    const mid = (GAP.from + GAP.to) / 2;
    await page.mouse.move(
      over.x + ((mid - range.from) / (range.to - range.from)) * over.width,
      over.y + over.height / 2,
    );
    await page.locator('#timeline-tip').waitFor({ state: 'visible' });
    await hasText(page.locator('#timeline-tip'), 'Gap (disconnect)');
    await shot(page, 'explorer-gap-hover', false);
    await page.mouse.move(0, 0);

    // The slider, by keyboard: the moment moves and the book changes, and still equals the endpoint's.
    const before = await shownLevels(page);
    const slider = page.getByLabel(/Time in your window/);
    await slider.focus();
    for (let i = 0; i < 40; i++) await slider.press('ArrowLeft');
    const moved = await settledBook(page, at);
    expect(parseTimestamp(moved.at)).toBeLessThan(parseTimestamp(at));
    const { shown } = await expectBookMatchesEndpoint(page, 'venue_b', TICKERS.venue_b, moved.at);
    expect(shown).not.toEqual(before);
    at = moved.at;

    // The changes after the moment are the deltas endpoint's, in order; choosing one shows the book just after it.
    const deltas = await client.deltaPage('venue_b', TICKERS.venue_b, { start: parseTimestamp(at) + 1, limit: 5 });
    await page.waitForSelector('.changes[data-state="ready"]');
    const rows = (await tableRows(page, '#changes')).slice(0, 5);
    expect(rows.map((r) => [r[0], r[2], r[3], r[4]])).toEqual(
      deltas.rows.map((d) => [
        formatTimestamp(parseTimestamp(d.ts)).replace('T', ' ').replace('Z', ''),
        String(d.sequence),
        d.side,
        d.price,
      ]),
    );
    await page.locator('#changes tbody tr').nth(2).getByRole('button').click();
    const after = await settledBook(page, at);
    expect(after.at).toBe(deltas.rows[2]!.ts);
    await expectBookMatchesEndpoint(page, 'venue_b', TICKERS.venue_b, after.at);

    // A moment inside the gap, typed into the date-time field: no book, and the page says why.
    const inside = GAP.from + 60_000;
    await page.getByLabel('Date and time (UTC)').fill(formatTimestamp(inside).replace('Z', ''));
    await page.getByLabel('Date and time (UTC)').press('Enter');
    const inGap = await settledBook(page, after.at);
    expect(inGap).toEqual({ at: formatTimestamp(inside), status: 'in_gap' });
    await hasText(page.locator('#book-status'), 'recorded gap (disconnect');
    await expectBookMatchesEndpoint(page, 'venue_b', TICKERS.venue_b, inGap.at);

    // Depth: every level.
    await page.getByLabel('Levels per side').selectOption('all');
    await page.waitForSelector('.book[data-depth="all"][aria-busy="false"]');
    await page.getByRole('button', { name: /Show the book at the end of the disconnect gap/ }).click();
    const end = await settledBook(page, inGap.at);
    expect(end).toEqual({ at: formatTimestamp(GAP.to), status: 'ok' });
    const restarted = await expectBookMatchesEndpoint(page, 'venue_b', TICKERS.venue_b, end.at);
    expect(restarted.answer.snapshot_ts).toBe(end.at);
    expect(restarted.shown.bids.length + restarted.shown.asks.length).toBeGreaterThan(10);
    // The picture in the README (docs/explorer.png is a copy): the page down to the book and the time and sales.
    await page.getByLabel('Levels per side').selectOption('10');
    await page.waitForSelector('.book[data-depth="10"][aria-busy="false"]');
    await page.waitForSelector(`.prices[data-state="ready"] ~ .trades[data-state="ready"][data-at="${GAP.to}"]`);
    await page.screenshot({
      path: path.join(SHOTS, 'explorer-readme.png'),
      fullPage: true,
      clip: { x: 0, y: 0, width: 1280, height: 2260 },
    });

    // The snippets name the moment and no key.
    await hasText(page.locator('#snippet-list'), `/api/venue_b/book/${TICKERS.venue_b}?at=`);
    expect(await page.locator('#snippet-list').textContent()).not.toContain('x-api-key');
    await shot(page, 'explorer');

    // A narrow screen: nothing wider than the viewport.
    await page.setViewportSize({ width: 390, height: 844 });
    // A function, not a string: a string predicate is eval'd in the page, which its CSP (rightly) refuses once the
    // first check fails and polling begins; a function is compiled by the DevTools protocol, outside the CSP.
    await page.waitForFunction(() => {
      const page = globalThis as unknown as {
        document: { documentElement: { scrollWidth: number } };
        innerWidth: number;
      };
      return page.document.documentElement.scrollWidth <= page.innerWidth;
    });
    await shot(page, 'explorer-narrow');

    expect(unexpected(seen)).toEqual([]);
    expect(offOrigin(seen)).toEqual([]);
    await page.close();
  });

  it('prices and trades in view: the book’s best prices, every trade a point, the list the trades endpoint’s, zoom', async () => {
    const T = TICKERS.venue_b;
    const { page, seen } = await openPage(`#/venue_b/${T}`);
    const { at } = await settledBook(page);
    await page.waitForSelector('.prices[data-state="ready"]');
    const chart = page.locator('#price-chart');
    const attr = async (name: string) => (await chart.getAttribute(`data-${name}`)) ?? '';
    const window = async () => ({
      from: Number(await attr('from')),
      to: Number(await attr('to')),
      ymin: Number(await attr('ymin')),
      ymax: Number(await attr('ymax')),
    });
    const w = await window();
    // The whole window in view, from the first book of the caller's window to the moment shown (the newest).
    expect(w.to).toBe(parseTimestamp(at));
    expect(w.from).toBe(parseTimestamp((await client.coverage('venue_b', T)).snapshots.first_ts!));
    // The best prices drawn last are the book's at the window's end, as the book endpoint gives it.
    const end = await client.book('venue_b', T, { at: w.to, depth: 1 });
    expect([await attr('last-bid'), await attr('last-ask')]).toEqual([end.bids?.[0]?.price, end.asks?.[0]?.price]);
    expect(Number(await attr('points'))).toBeGreaterThan(100);

    // Every trade the API returns for the window is drawn, and listed up to the moment, newest first, side coloured.
    const trades: TradeRow[] = [];
    for await (const t of client.trades('venue_b', T, { start: w.from, end: w.to })) trades.push(t);
    expect(trades.length).toBeGreaterThan(20);
    expect(Number(await attr('trades'))).toBe(trades.length);
    const listed = (list: TradeRow[], upTo: number) =>
      list
        .filter((t) => parseTimestamp(t.ts) <= upTo)
        .reverse()
        .slice(0, 200)
        .map((t) => [showTime(t.ts).slice(11), t.side, t.size, t.price]);
    await page.waitForSelector(`.trades[data-state="ready"][data-at="${parseTimestamp(at)}"]`);
    expect(await tableRows(page, '#trades')).toEqual(listed(trades, parseTimestamp(at)));
    const firstRow = page.locator('#trades tbody tr').first();
    const side = trades[trades.length - 1]!.side === 'buy' ? 'bid' : 'ask';
    expect(await firstRow.locator('td').nth(1).getAttribute('class')).toBe(side);

    // A trade's point: the pointer on it (the trade farthest from the others, by pixels) names that trade.
    await chart.scrollIntoViewIfNeeded();
    const over = (await chart.locator('.u-over').boundingBox())!;
    const pos = (t: TradeRow) => ({
      x: over.x + ((parseTimestamp(t.ts) - w.from) / (w.to - w.from)) * over.width,
      y: over.y + (1 - (Number(t.price) - w.ymin) / (w.ymax - w.ymin)) * over.height,
    });
    const points = trades.map(pos);
    let pick = 0;
    let room = -1;
    points.forEach((p, i) => {
      const nearest = Math.min(...points.filter((_q, j) => j !== i).map((q) => Math.hypot(p.x - q.x, p.y - q.y)));
      if (nearest > room) [pick, room] = [i, nearest];
    });
    const target = trades[pick]!;
    await page.mouse.move(points[pick]!.x, points[pick]!.y);
    await page.waitForSelector(`#price-tip[data-kind="trade"][data-trade="${target.trade_id}"]`);
    await hasText(page.locator('#price-tip'), `Trade ${target.side} ${target.size} at ${target.price}`);
    await shot(page, 'explorer-trade-hover', false);
    await page.mouse.move(0, 0);

    // A trade of the list: the book at its moment, the list up to it.
    const chosen = trades[trades.length - 5]!;
    await page.locator(`#trades tbody tr[data-trade="${chosen.trade_id}"]`).getByRole('button').click();
    const atTrade = await settledBook(page, at);
    expect(atTrade.at).toBe(chosen.ts);
    await expectBookMatchesEndpoint(page, 'venue_b', T, atTrade.at);
    await page.waitForSelector(`.trades[data-at="${parseTimestamp(chosen.ts)}"]`);
    expect(await tableRows(page, '#trades')).toEqual(listed(trades, parseTimestamp(chosen.ts)));

    // Zoom: a drag across the price chart zooms the timeline, whose x range is the window in view; the chart and the
    // list follow it.
    await chart.scrollIntoViewIfNeeded();
    const area = (await chart.locator('.u-over').boundingBox())!;
    await page.mouse.move(area.x + area.width * 0.3, area.y + area.height / 2);
    await page.mouse.down();
    await page.mouse.move(area.x + area.width * 0.6, area.y + area.height / 2, { steps: 8 });
    await page.mouse.up();
    await page.waitForSelector(`#price-chart[data-from]:not([data-from="${w.from}"])`);
    await page.waitForSelector('.prices[data-state="ready"]');
    const zoomed = await window();
    expect(zoomed.from).toBeGreaterThan(w.from);
    expect(zoomed.to - zoomed.from).toBeLessThan((w.to - w.from) / 2);
    expect([
      Number(await page.locator('#timeline').getAttribute('data-view-from')),
      Number(await page.locator('#timeline').getAttribute('data-view-to')),
    ]).toEqual([zoomed.from, zoomed.to]);
    const inView: TradeRow[] = [];
    for await (const t of client.trades('venue_b', T, { start: zoomed.from, end: zoomed.to })) inView.push(t);
    expect(Number(await attr('trades'))).toBe(inView.length);
    const moment = Number(await page.locator('.trades[data-state="ready"]').getAttribute('data-at'));
    expect(await tableRows(page, '#trades')).toEqual(listed(inView, moment));
    await shot(page, 'explorer-prices');

    expect(unexpected(seen)).toEqual([]);
    expect(offOrigin(seen)).toEqual([]);
    await page.close();
  });

  it('with a key typed in: its window is shown and explained; the key travels only as the header', async () => {
    const key = await h.key({ max_data_age_days: 2, name: 'explorer-test' });
    const { page, seen } = await openPage(`#/venue_c/${TICKERS.venue_c}`);
    await settledBook(page);
    await page.getByLabel(/API key/).fill(key);
    await page.getByRole('button', { name: 'Use key' }).click();
    await hasText(page.locator('#caller-status'), `Key ending …${key.slice(-4)} in use`);
    await hasText(page.locator('#window-note'), 'your key sees the last 2 days (its max_data_age_days)');
    await hasText(
      page.locator('#window-note'),
      formatTimestamp(NOW - 2 * 86_400_000)
        .replace('T', ' ')
        .replace('Z', ''),
    );
    const { at } = await settledBook(page);
    await expectBookMatchesEndpoint(page, 'venue_c', TICKERS.venue_c, at);
    await hasText(page.locator('#snippet-list'), 'x-api-key: $DEPTHGATE_API_KEY');
    await shot(page, 'explorer-key');

    // Sent as the header on the API calls after it was typed, and nowhere else.
    const api = seen.requests.filter((r) => new URL(r.url).pathname.startsWith('/api/'));
    expect(api.filter((r) => r.headers['x-api-key'] === key).length).toBeGreaterThan(0);
    expect(seen.requests.filter((r) => r.url.includes(key))).toEqual([]);
    expect(page.url()).not.toContain(key);
    const stored = await page.evaluate<string>(
      'JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })',
    );
    expect(stored).not.toContain(key);
    expect(JSON.stringify(await context.cookies())).not.toContain(key);
    expect(await page.content()).not.toContain(key);
    expect(JSON.stringify(seen.console)).not.toContain(key);
    expect(await page.getByLabel(/API key/).inputValue()).toBe('');
    expect(unexpected(seen)).toEqual([]);
    expect(offOrigin(seen)).toEqual([]);
    await page.close();
  });

  it('a revoked key: a specific message, then anonymous again on request', async () => {
    const key = await h.key({ name: 'revoked' });
    await h.revoke(key);
    const { page, seen } = await openPage(`#/venue_b/${TICKERS.venue_b}`);
    await settledBook(page);
    await page.getByLabel(/API key/).fill(key);
    await page.getByRole('button', { name: 'Use key' }).click();
    const banner = page.getByRole('alert');
    await hasText(banner, 'The service refused your API key: it is unknown or has been revoked');
    await hasText(page.locator('#caller-status'), 'Key refused');
    await shot(page, 'explorer-revoked-key', false);
    await page.getByRole('button', { name: 'Continue anonymously' }).click();
    await page.locator('#banner').waitFor({ state: 'hidden' });
    await hasText(page.locator('#caller-status'), 'Anonymous');
    await settledBook(page);
    expect(unexpected(seen, 401)).toEqual([]);
    expect(offOrigin(seen)).toEqual([]);
    await page.close();
  });

  it('an unknown ticker or exchange in the address: a specific message, never a blank page', async () => {
    const { page, seen } = await openPage('#/venue_b/NO-SUCH-TICKER');
    await hasText(page.getByRole('alert'), 'Unknown ticker "NO-SUCH-TICKER" on venue_b');
    await page.waitForSelector('.coverage[data-state="error"]');
    await shot(page, 'explorer-unknown-ticker', false);
    await page.goto(`${origin}/explorer#/nyse/IBM`);
    await hasText(page.getByRole('alert'), 'Unknown exchange "nyse" in the address');
    await page.goto(`${origin}/explorer#/venue_b/${TICKERS.venue_b}?at=yesterday`);
    await hasText(
      page.getByRole('alert'),
      '"yesterday" in the address is not a time (RFC 3339, or 13-digit epoch milliseconds)',
    );
    expect(unexpected(seen, 404)).toEqual([]);
    expect(offOrigin(seen)).toEqual([]);
    await page.close();
  });

  it('the service down: a specific message with a retry', async () => {
    // A server of its own, stopped under the open page.
    const own = await h.listen();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${own.url}/explorer#/venue_c/${TICKERS.venue_c}`);
    await settledBook(page);
    // Every section's reading done first (the prices start after a pause once the view settles): only the book's
    // request, made after the stop, can fail, so the banner names the book and nothing overwrites it.
    await page.waitForSelector('.coverage[data-state="ready"]');
    await page.waitForSelector('.changes[data-state="ready"]');
    await page.waitForSelector('.prices[data-state="ready"]');
    own.server.closeAllConnections();
    await new Promise<void>((resolve) => own.server.close(() => resolve()));
    await page.getByLabel('Levels per side').selectOption('5');
    const banner = page.getByRole('alert');
    await hasText(banner, `Cannot reach the history service at ${own.url} for the book`);
    await page.getByRole('button', { name: 'Retry' }).waitFor({ state: 'visible' });
    await page.waitForSelector('.book[data-status="error"]');
    await shot(page, 'explorer-service-down', false);
    expect(errors).toEqual([]);
    await page.close();
  });
});
