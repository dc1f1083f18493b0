/**
 * The Explorer page: pick an exchange and a ticker, see what was recorded (coverage, gaps), the prices and trades of
 * the window in view, the book at any moment with the trades up to it, and the changes after it — all through
 * @depthgate/client's HistoryClient against the service that served the page.
 *
 * The API key, when one is typed in, lives in this module's memory only (`Explorer.key`): it is sent as the
 * `X-API-Key` header by the client, never put in a URL, the address's fragment, storage, a cookie or the console,
 * and it is gone when the tab is closed or reloaded.
 */
import './styles.css';
import {
  HistoryClient,
  TransportError,
  parseTimestamp,
  type Coverage,
  type DeltaRow,
  type ServiceBook,
} from '@depthgate/client';
import { DepthChart, PriceChart, Timeline } from './charts';
import { bestOf, fromLocalInput, showCount, showDuration, showTime, toLocalInput, withTotals } from './format';
import { describeProblem, windowText, type Step } from './messages';
import { TickerPicker } from './picker';
import { MAX_EVENTS, readPrices, tradesUpTo, type PriceData } from './prices';
import { snippets } from './snippets';
import { EXCHANGES, depthOf, formatHash, parseHash, type ExchangeKey, type ViewState } from './state';

const CHANGES_PAGE = 100;
/** Trades listed at most (the newest up to the moment); the chart draws every one of the window. */
const TRADES_SHOWN = 200;
/** A rolling window (anonymous, max_data_age_days) moves on while a page is open: stay this far inside it. */
const ROLLING_MARGIN_MS = 60_000;

function el<T extends HTMLElement = HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (!e) throw new Error(`the page has no #${id}`);
  return e as T;
}

function cell(text: string, className?: string): HTMLTableCellElement {
  const td = document.createElement('td');
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function dlRows(dl: HTMLElement, rows: [string, string, string?][]): void {
  dl.replaceChildren(
    ...rows.map(([term, value, className]) => {
      const pair = document.createElement('div');
      const dt = document.createElement('dt');
      dt.textContent = term;
      const dd = document.createElement('dd');
      dd.textContent = value;
      if (className) dd.className = className;
      pair.append(dt, dd);
      return pair;
    }),
  );
}

const aborted = (err: unknown) => err instanceof TransportError && err.code === 'aborted';

/** The newest `ts` of any kind, and the oldest, in a coverage answer (undefined: nothing recorded in the window). */
function recordedSpan(c: Coverage): { first: number; last: number } | undefined {
  const firsts = [c.snapshots.first_ts, c.deltas.first_ts].filter((t): t is string => t !== null);
  const lasts = [c.snapshots.last_ts, c.deltas.last_ts].filter((t): t is string => t !== null);
  if (!firsts.length || !lasts.length) return undefined;
  return {
    first: Math.min(...firsts.map((t) => parseTimestamp(t))),
    last: Math.max(...lasts.map((t) => parseTimestamp(t))),
  };
}

class Explorer {
  /** The API key: memory only (see the module's comment). */
  private key: string | undefined;
  private client: HistoryClient;
  private state: ViewState;
  private readonly origin = location.origin;
  private readonly tickers = new Map<ExchangeKey, string[]>();
  /** The moments the slider spans: the caller's window (or the first row after its start) to the newest row. */
  private range: { lo: number; hi: number } | undefined;
  private book: ServiceBook | undefined;
  private coverage: Coverage | undefined;
  /** The window in view's prices and trades, and which window they are (or are being read) for. */
  private prices: PriceData | undefined;
  private pricesKey: string | undefined;
  private viewTimer: ReturnType<typeof setTimeout> | undefined;
  private changes: DeltaRow[] = [];
  private changesCursor: string | null = null;
  private readonly inflight = new Map<Step, AbortController>();
  private retry: (() => void) | undefined;
  private sliderTimer: ReturnType<typeof setTimeout> | undefined;

  private readonly picker: TickerPicker;
  private readonly timeline: Timeline;
  private readonly priceChart: PriceChart;
  private readonly depthChart: DepthChart;

  constructor() {
    this.client = this.newClient();
    const { state, problems } = parseHash(location.hash);
    this.state = state;
    this.picker = new TickerPicker(el('ticker'), el('ticker-list'), el('ticker-count'), (t) => {
      this.clearProblem();
      void this.selectTicker(t);
    });
    this.timeline = new Timeline(
      el('timeline'),
      el('timeline-tip'),
      (ms) => this.setMoment(ms),
      (from, to) => {
        // The window in view changed (a zoom): read its prices once the gesture is over.
        clearTimeout(this.viewTimer);
        this.viewTimer = setTimeout(() => void this.loadPrices({ from, to }), 300);
      },
    );
    this.priceChart = new PriceChart(
      el('price-chart'),
      el('price-tip'),
      (ms) => this.setMoment(ms),
      (from, to) => this.timeline.zoom(from, to),
    );
    this.depthChart = new DepthChart(el('depth-chart'));
    // One option per recorded exchange, from the list generated from the platform registry.
    const select = el<HTMLSelectElement>('exchange');
    for (const e of EXCHANGES) select.add(new Option(`${e.key} (${e.name})`, e.key));
    this.wire();
    select.value = state.exchange;
    el<HTMLSelectElement>('depth').value = state.depth === null ? 'all' : String(state.depth);
    if (problems.length) this.problem(problems.join(' '), { retry: false });
    void this.loadTickers();
    if (state.ticker !== undefined) void this.selectTicker(state.ticker, state.at);
  }

  private newClient(): HistoryClient {
    // One quick retry of a failed connection; a 429 or 503 whose Retry-After is longer than 1.5 s is shown instead
    // of waited for, so the page never hangs silently.
    return new HistoryClient({
      baseUrl: this.origin,
      apiKey: this.key,
      timeoutMs: 20_000,
      retry: { retries: 1, maxDelayMs: 1_500, baseDelayMs: 300 },
    });
  }

  // --- wiring ----------------------------------------------------------------------------------------------------

  private wire(): void {
    el('key-form').addEventListener('submit', (e) => {
      e.preventDefault();
      const input = el<HTMLInputElement>('key-input');
      const key = input.value.trim();
      input.value = '';
      if (key === '') return this.callerStatus('Type a key first (dg_…), or leave the field empty to stay anonymous.');
      if (!/^[\x21-\x7e]+$/.test(key)) {
        return this.callerStatus('That is not a key: keys are printable ASCII (dg_ and 39 letters and digits).');
      }
      this.useKey(key);
    });
    el('key-forget').addEventListener('click', () => this.useKey(undefined));
    el('banner-close').addEventListener('click', () => this.clearProblem());
    el('banner-retry').addEventListener('click', () => {
      const again = this.retry;
      this.clearProblem();
      again?.();
    });
    el('banner-anonymous').addEventListener('click', () => {
      this.clearProblem();
      this.useKey(undefined);
    });
    el<HTMLSelectElement>('exchange').addEventListener('change', (e) => {
      this.state = { ...this.state, exchange: (e.target as HTMLSelectElement).value as ExchangeKey, ticker: undefined };
      this.state.at = undefined;
      this.picker.setValue('');
      this.resetTicker();
      this.writeHash();
      void this.loadTickers();
    });
    el<HTMLSelectElement>('depth').addEventListener('change', (e) => {
      const depth = depthOf((e.target as HTMLSelectElement).value);
      if (depth === undefined) return;
      this.state.depth = depth;
      this.writeHash();
      void this.loadBook();
    });
    const slider = el<HTMLInputElement>('slider');
    slider.addEventListener('input', () => {
      const ms = slider.valueAsNumber;
      this.showMoment(ms);
      clearTimeout(this.sliderTimer);
      this.sliderTimer = setTimeout(() => this.setMoment(ms), 250);
    });
    el<HTMLInputElement>('at-input').addEventListener('change', (e) => {
      const ms = fromLocalInput((e.target as HTMLInputElement).value);
      if (Number.isNaN(ms)) return this.problem('That date and time could not be read.', { retry: false });
      this.setMoment(ms);
    });
    for (const b of document.querySelectorAll<HTMLButtonElement>('button[data-step]')) {
      b.addEventListener('click', () => this.setMoment((this.state.at ?? 0) + Number(b.dataset.step)));
    }
    el('prev-change').addEventListener('click', () => {
      const last = this.book?.last_delta;
      if (last) this.setMoment(parseTimestamp(last.ts) - 1);
    });
    el('next-change').addEventListener('click', () => {
      const next = this.changes[0];
      if (next) this.setMoment(parseTimestamp(next.ts));
    });
    el('changes-more').addEventListener('click', () => void this.loadChanges(false));
    new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting) && this.changesCursor && !this.inflight.has('changes')) {
          void this.loadChanges(false);
        }
      },
      { root: el('changes-scroll') },
    ).observe(el('changes-end'));
    window.addEventListener('hashchange', () => {
      const { state, problems } = parseHash(location.hash);
      if (problems.length) return this.problem(problems.join(' '), { retry: false });
      if (formatHash(state) === formatHash(this.state)) return;
      const exchangeChanged = state.exchange !== this.state.exchange;
      this.state = state;
      el<HTMLSelectElement>('exchange').value = state.exchange;
      el<HTMLSelectElement>('depth').value = state.depth === null ? 'all' : String(state.depth);
      if (exchangeChanged) void this.loadTickers();
      if (state.ticker !== undefined) void this.selectTicker(state.ticker, state.at);
      else this.resetTicker();
    });
  }

  // --- the key ---------------------------------------------------------------------------------------------------

  private useKey(key: string | undefined): void {
    for (const c of this.inflight.values()) c.abort();
    this.inflight.clear();
    this.key = key;
    this.client = this.newClient();
    this.tickers.clear();
    el('key-forget').hidden = key === undefined;
    this.callerStatus(
      key === undefined
        ? 'Anonymous: the last day of data.'
        : `Checking the key ending …${key.slice(-4)} (kept in this tab's memory only)…`,
    );
    void this.loadTickers().then((ok) => {
      if (!ok) return;
      if (key !== undefined) {
        this.callerStatus(`Key ending …${key.slice(-4)} in use (kept in this tab's memory only; forget it any time).`);
      }
      if (this.state.ticker !== undefined) void this.selectTicker(this.state.ticker, this.state.at);
    });
  }

  private callerStatus(text: string): void {
    el('caller-status').textContent = text;
  }

  // --- loading ---------------------------------------------------------------------------------------------------

  /** Runs one step's request, aborting the step's previous one; failures become the banner. */
  private async run<T>(
    step: Step,
    call: (signal: AbortSignal) => Promise<T>,
    again: () => void,
  ): Promise<T | undefined> {
    this.inflight.get(step)?.abort();
    const controller = new AbortController();
    this.inflight.set(step, controller);
    try {
      return await call(controller.signal);
    } catch (err) {
      if (controller.signal.aborted || aborted(err)) return undefined;
      const problem = describeProblem(err, {
        step,
        exchange: this.state.exchange,
        ticker: this.state.ticker,
        keyed: this.key !== undefined,
        origin: this.origin,
      });
      if (problem.kind === 'key' && this.key !== undefined) {
        // A refused key is dropped at once: every later request would be refused too.
        this.key = undefined;
        this.client = this.newClient();
        this.tickers.clear();
        el('key-forget').hidden = true;
        this.callerStatus('Key refused: nothing is loaded until you enter another key or continue anonymously.');
        this.resetTicker(true);
      }
      this.problem(problem.text, { retry: problem.retry ? again : false, anonymous: problem.kind === 'key' });
      return undefined;
    } finally {
      if (this.inflight.get(step) === controller) this.inflight.delete(step);
    }
  }

  /** Loads the exchange's ticker list (once per exchange and key); false when it failed. */
  private async loadTickers(): Promise<boolean> {
    const exchange = this.state.exchange;
    const cached = this.tickers.get(exchange);
    if (cached) {
      this.picker.setTickers(cached);
      return true;
    }
    this.picker.setTickers(undefined);
    const list = await this.run(
      'tickers',
      (signal) => this.client.tickers(exchange, { signal }),
      () => void this.loadTickers(),
    );
    if (list === undefined) {
      this.picker.setTickers([]);
      return false;
    }
    this.tickers.set(exchange, list);
    if (this.state.exchange === exchange) this.picker.setTickers(list);
    return true;
  }

  private async selectTicker(ticker: string, at?: number): Promise<void> {
    this.state = { ...this.state, ticker, at };
    this.pricesKey = undefined;
    this.picker.setValue(ticker);
    this.writeHash();
    const section = el('coverage-h').parentElement as HTMLElement;
    section.dataset.state = 'loading';
    const { exchange } = this.state;
    const coverage = await this.run(
      'coverage',
      (signal) => this.client.coverage(exchange, ticker, { signal }),
      () => void this.selectTicker(ticker, at),
    );
    if (coverage === undefined) {
      if (this.inflight.has('coverage')) return; // a newer selection is on its way
      this.resetTicker(true);
      section.dataset.state = 'error';
      return;
    }
    // The service names the ticker as stored (a case-insensitive match finds it).
    this.state.ticker = coverage.ticker;
    this.coverage = coverage;
    this.picker.setValue(coverage.ticker);
    this.showCoverage(coverage);
    section.dataset.state = 'ready';
    const span = recordedSpan(coverage);
    const windowStart = parseTimestamp(coverage.window?.start_ts ?? coverage.start_ts);
    if (!span) {
      this.range = undefined;
      this.enableMoment(false);
      this.bookStatus('empty', 'Nothing was recorded for this ticker in your window.');
      return;
    }
    const rolling = coverage.window?.rule === 'anonymous' || coverage.window?.rule === 'max_data_age_days';
    const lo = Math.max(span.first, windowStart + (rolling ? ROLLING_MARGIN_MS : 0));
    this.range = { lo: Math.min(lo, span.last), hi: span.last };
    this.enableMoment(true);
    if (at !== undefined && at < windowStart) {
      this.problem(
        `${showTime(at)} UTC is before your window for ${coverage.ticker}, which starts ${showTime(windowStart)} UTC. ${
          coverage.window ? windowText(coverage.window, coverage.ticker) : ''
        } Showing the newest book instead.`,
        { retry: false },
      );
      at = undefined;
    }
    this.setMoment(at ?? span.last);
    void this.loadPrices(this.timeline.view());
  }

  private setMoment(ms: number): void {
    if (!this.range || this.state.ticker === undefined) return;
    clearTimeout(this.sliderTimer);
    const at = Math.round(Math.min(Math.max(ms, this.range.lo), this.range.hi));
    this.state.at = at;
    this.showMoment(at);
    this.writeHash();
    this.renderSnippets();
    this.showTrades();
    void this.loadBook();
    void this.loadChanges(true);
  }

  /**
   * The prices and trades of the window in view (the timeline's x range), read with the client's `events()`: from
   * the latest snapshot at or before the window's start (no further back than the first snapshot of the caller's
   * window, so one request finds it), the changes and trades in the order they arrived.
   */
  private async loadPrices(view: { from: number; to: number }, force = false): Promise<void> {
    const { exchange, ticker } = this.state;
    const coverage = this.coverage;
    if (ticker === undefined || !this.range || !coverage) return;
    const firstBook = coverage.snapshots.first_ts === null ? undefined : parseTimestamp(coverage.snapshots.first_ts);
    const from = Math.max(view.from, this.range.lo, firstBook ?? -Infinity);
    const to = Math.min(view.to, this.range.hi);
    const key = `${exchange}/${ticker} ${from} ${to}`;
    if (!force && key === this.pricesKey) return;
    this.pricesKey = key;
    const section = el('prices-h').parentElement as HTMLElement;
    const status = el('prices-status');
    if (firstBook === undefined || from > to) {
      this.inflight.get('prices')?.abort();
      this.prices = undefined;
      this.priceChart.clear();
      section.dataset.state = 'empty';
      status.textContent =
        firstBook === undefined
          ? 'No snapshot in your window: there is no book to chart.'
          : 'Nothing recorded in the window in view.';
      this.showTrades();
      return;
    }
    section.dataset.state = 'loading';
    section.setAttribute('aria-busy', 'true');
    status.textContent = `Reading the changes and trades of ${showTime(from)} – ${showTime(to)} UTC…`;
    const data = await this.run(
      'prices',
      (signal) =>
        readPrices(this.client, exchange, ticker, { from, to, lookbackMs: from - firstBook + 1 }, signal, (d) => {
          status.textContent = `Reading… ${showCount(d.changes)} changes and ${showCount(d.trades.length)} trades so far.`;
        }),
      () => void this.loadPrices(view, true),
    );
    if (data === undefined) {
      if (this.pricesKey === key && !this.inflight.has('prices')) {
        section.dataset.state = 'error';
        section.setAttribute('aria-busy', 'false');
        status.textContent = 'The prices and trades could not be read (see the message above).';
        this.pricesKey = undefined;
      }
      return;
    }
    this.prices = data;
    this.priceChart.show(data);
    this.priceChart.setMoment(this.state.at);
    section.dataset.state = 'ready';
    section.setAttribute('aria-busy', 'false');
    const gaps = [
      data.bookGaps.length ? `${data.bookGaps.length} gap${data.bookGaps.length === 1 ? '' : 's'} of the book` : '',
      data.tradeGaps.length
        ? `${data.tradeGaps.length} gap${data.tradeGaps.length === 1 ? '' : 's'} of the trades (trades may be missing there)`
        : '',
    ].filter(Boolean);
    const summary = `${showCount(data.changes)} changes and ${showCount(data.trades.length)} trades, ${showTime(data.from)} – ${showTime(
      data.to,
    )} UTC${gaps.length ? `; ${gaps.join(' and ')}` : ''}.`;
    status.textContent =
      data.stoppedAt === undefined
        ? summary
        : `Read up to ${showTime(data.stoppedAt)} UTC only (${showCount(MAX_EVENTS)} changes and trades): drag on the chart or the timeline to zoom in. ${summary}`;
    el('price-chart').setAttribute(
      'aria-label',
      `Price chart of ${ticker}: best bid, best ask and ${data.trades.length} trades from ${showTime(data.from)} to ${showTime(
        data.to,
      )} UTC (the time-and-sales list has the trades up to the chosen moment).`,
    );
    this.showTrades();
  }

  private async loadBook(): Promise<void> {
    const { exchange, ticker, at, depth } = this.state;
    if (ticker === undefined || at === undefined) return;
    const section = el('book-h').parentElement as HTMLElement;
    section.setAttribute('aria-busy', 'true');
    section.dataset.status = 'loading';
    const book = await this.run(
      'book',
      (signal) => this.client.book(exchange, ticker, { at, depth: depth ?? undefined, signal }),
      () => void this.loadBook(),
    );
    if (book === undefined) {
      if (!this.inflight.has('book')) {
        section.setAttribute('aria-busy', 'false');
        section.dataset.status = 'error';
      }
      return;
    }
    this.book = book;
    this.showBook(book);
    section.setAttribute('aria-busy', 'false');
  }

  private async loadChanges(reset: boolean): Promise<void> {
    const { exchange, ticker, at } = this.state;
    if (ticker === undefined || at === undefined) return;
    const section = el('changes-h').parentElement as HTMLElement;
    if (reset) {
      this.changes = [];
      this.changesCursor = null;
      el('changes').querySelector('tbody')?.replaceChildren();
      el('changes-scroll').scrollTop = 0;
    } else if (this.changesCursor === null) return;
    section.dataset.state = 'loading';
    const cursor = this.changesCursor ?? undefined;
    const page = await this.run(
      'changes',
      (signal) =>
        this.client.deltaPage(exchange, ticker, {
          ...(cursor === undefined ? { start: at + 1 } : { cursor }),
          limit: CHANGES_PAGE,
          fields: ['received_ts'],
          signal,
        }),
      () => void this.loadChanges(reset),
    );
    if (page === undefined) {
      if (!this.inflight.has('changes')) section.dataset.state = 'error';
      return;
    }
    this.changes.push(...page.rows);
    this.changesCursor = page.next_cursor ?? null;
    this.appendChanges(page.rows);
    section.dataset.state = 'ready';
    section.dataset.rows = String(this.changes.length);
    el('changes-more').hidden = this.changesCursor === null;
    el('changes-end').textContent =
      this.changesCursor === null
        ? this.changes.length
          ? `The last recorded change of your window (${showCount(this.changes.length)} shown).`
          : 'No change was recorded after this moment.'
        : '';
    el<HTMLButtonElement>('next-change').disabled = this.changes.length === 0;
  }

  // --- rendering -------------------------------------------------------------------------------------------------

  private showCoverage(c: Coverage): void {
    const span = recordedSpan(c);
    const windowStart = parseTimestamp(c.window?.start_ts ?? c.start_ts);
    el('window-note').textContent = c.window ? windowText(c.window, c.ticker) : '';
    dlRows(el('coverage-summary'), [
      ['Window starts', `${showTime(windowStart)} UTC`],
      ['First row', span ? `${showTime(span.first)} UTC` : '—'],
      ['Last row', span ? `${showTime(span.last)} UTC` : '—'],
      ['Snapshots', `${showCount(c.snapshots.rows)} rows, ${showCount(c.snapshots.books ?? 0)} books`],
      ['Changes', `${showCount(c.deltas.rows)} rows`],
      ['Gaps', showCount(c.gaps.length), c.gaps.length ? 'warn' : undefined],
    ]);
    const to = Math.max(span?.last ?? windowStart, ...c.gaps.map((g) => parseTimestamp(g.to_ts)));
    this.timeline.show({ from: windowStart, to }, span, c.gaps);
    el('timeline').setAttribute(
      'aria-label',
      `Coverage timeline of ${c.ticker} from ${showTime(windowStart)} to ${showTime(to)} UTC: ${
        span ? `recorded from ${showTime(span.first)} to ${showTime(span.last)}` : 'nothing recorded'
      }, ${c.gaps.length} gap${c.gaps.length === 1 ? '' : 's'} (listed below).`,
    );
    const body = el('gaps').querySelector('tbody') as HTMLElement;
    body.replaceChildren(
      ...c.gaps.map((g) => {
        const from = parseTimestamp(g.from_ts);
        const to = parseTimestamp(g.to_ts);
        const tr = document.createElement('tr');
        tr.dataset.reason = g.reason;
        const go = document.createElement('button');
        go.type = 'button';
        go.textContent = 'Book after it';
        go.setAttribute('aria-label', `Show the book at the end of the ${g.reason} gap, ${showTime(to)} UTC`);
        go.addEventListener('click', () => this.setMoment(to));
        const action = document.createElement('td');
        action.append(go);
        tr.append(cell(showTime(from)), cell(showTime(to)), cell(showDuration(to - from)), cell(g.reason), action);
        return tr;
      }),
    );
    if (!c.gaps.length) {
      const tr = document.createElement('tr');
      const td = cell('No recorded gap in your window.');
      td.colSpan = 5;
      tr.append(td);
      body.append(tr);
    }
  }

  private enableMoment(on: boolean): void {
    const slider = el<HTMLInputElement>('slider');
    const input = el<HTMLInputElement>('at-input');
    slider.disabled = !on;
    input.disabled = !on;
    for (const b of document.querySelectorAll<HTMLButtonElement>('button[data-step]')) b.disabled = !on;
    if (!on || !this.range) return;
    const { lo, hi } = this.range;
    slider.min = String(lo);
    slider.max = String(hi);
    // About 1,000 steps across the window (arrow keys), whole seconds when the window allows.
    const step = Math.max(1, Math.round((hi - lo) / 1000 / 1000) * 1000 || Math.round((hi - lo) / 1000));
    slider.step = String(step);
    input.min = toLocalInput(lo);
    input.max = toLocalInput(hi);
    el('slider-range').textContent = `(${showTime(lo)} – ${showTime(hi)} UTC)`;
  }

  /** The moment in the controls (slider, date-time field, timeline line), without loading anything. */
  private showMoment(ms: number): void {
    const slider = el<HTMLInputElement>('slider');
    slider.value = String(ms);
    slider.setAttribute('aria-valuetext', `${showTime(ms)} UTC`);
    el<HTMLInputElement>('at-input').value = toLocalInput(ms);
    this.timeline.setMoment(ms);
    this.priceChart.setMoment(ms);
  }

  /** The time-and-sales list: the trades of the window in view up to the moment, newest first. */
  private showTrades(): void {
    const section = el('trades-h').parentElement as HTMLElement;
    const body = el('trades').querySelector('tbody') as HTMLElement;
    const note = el('trades-note');
    const data = this.prices;
    const at = this.state.at;
    if (!data || at === undefined) {
      body.replaceChildren();
      section.dataset.state = 'empty';
      delete section.dataset.rows;
      note.textContent = this.state.ticker === undefined ? '' : 'The trades of the window in view come with its chart.';
      return;
    }
    const { rows, total } = tradesUpTo(data.trades, at, TRADES_SHOWN);
    body.replaceChildren(
      ...rows.map((t) => {
        const tr = document.createElement('tr');
        tr.dataset.trade = t.trade_id;
        const go = document.createElement('button');
        go.type = 'button';
        go.className = 'link';
        go.textContent = showTime(t.at).slice(11);
        go.title = showTime(t.at);
        go.setAttribute('aria-label', `Show the book at the trade of ${showTime(t.at)} UTC`);
        go.addEventListener('click', () => this.setMoment(t.at));
        const when = document.createElement('td');
        when.append(go);
        const side = t.side === 'buy' ? 'bid' : 'ask';
        tr.append(when, cell(t.side, side), cell(t.size, `num ${side}`), cell(t.price, `num price ${side}`));
        return tr;
      }),
    );
    section.dataset.state = 'ready';
    section.dataset.rows = String(rows.length);
    section.dataset.at = String(at);
    const where = `in the window in view (${showTime(data.from)} – ${showTime(data.stoppedAt ?? data.to)} UTC)`;
    note.textContent =
      total === 0
        ? `No trade ${where} up to ${showTime(at)} UTC.`
        : `${total > rows.length ? `The newest ${rows.length} of ${showCount(total)}` : showCount(total)} trade${
            total === 1 ? '' : 's'
          } ${where} up to ${showTime(at)} UTC, newest first. Buy: a taker lifted an ask; sell: a taker hit a bid.`;
  }

  private bookStatus(status: string, text: string): void {
    const section = el('book-h').parentElement as HTMLElement;
    section.dataset.status = status;
    el('book-status').textContent = text;
  }

  private showBook(b: ServiceBook): void {
    const section = el('book-h').parentElement as HTMLElement;
    section.dataset.at = b.at;
    section.dataset.depth = this.state.depth === null ? 'all' : String(this.state.depth);
    el<HTMLButtonElement>('prev-change').disabled = !(b.status === 'ok' && b.last_delta);
    const body = el('levels').querySelector('tbody') as HTMLElement;
    if (b.status !== 'ok') {
      body.replaceChildren();
      dlRows(el('book-best'), []);
      this.depthChart.clear();
      el('depth-chart').setAttribute('aria-label', 'Depth chart: no book at this moment');
      if (b.status === 'in_gap') {
        const from = parseTimestamp(b.gap.from_ts);
        const to = parseTimestamp(b.gap.to_ts);
        this.bookStatus(
          'in_gap',
          `No book at ${showTime(parseTimestamp(b.at))} UTC: the moment lies in a recorded gap (${b.gap.reason}, ${showTime(
            from,
          )} – ${showTime(to)} UTC, ${showDuration(to - from)}). Changes were not recorded then, so any book would be a guess.`,
        );
      } else {
        this.bookStatus(
          'no_data',
          `No book at ${showTime(parseTimestamp(b.at))} UTC: nothing to start from in your window before this moment (no snapshot yet). Move later.`,
        );
      }
      return;
    }
    const last = b.last_delta;
    const base = b.base_gap
      ? `restarted empty at the end of a ${b.base_gap.reason} gap (${showTime(parseTimestamp(b.base_gap.to_ts))})`
      : `from the snapshot of ${showTime(parseTimestamp(b.snapshot_ts ?? b.at))}`;
    this.bookStatus(
      'ok',
      `Book at ${showTime(parseTimestamp(b.at))} UTC, ${base}${
        last
          ? `, up to the change of ${showTime(parseTimestamp(last.ts))} (sequence ${last.sequence})`
          : ', no change since'
      }. ${b.bids.length} bid and ${b.asks.length} ask levels shown.`,
    );
    const best = bestOf(b.bids, b.asks);
    dlRows(el('book-best'), [
      ['Best bid', best.bid ? `${best.bid.price} × ${best.bid.quantity}` : '—', 'bid'],
      ['Best ask', best.ask ? `${best.ask.price} × ${best.ask.quantity}` : '—', 'ask'],
      ['Spread', best.spread ?? '—'],
      ['Mid', best.mid ?? '—'],
    ]);
    const bids = withTotals(b.bids);
    const asks = withTotals(b.asks);
    const rows: HTMLTableRowElement[] = [];
    for (let i = 0; i < Math.max(bids.length, asks.length); i++) {
      const bid = bids[i];
      const ask = asks[i];
      const tr = document.createElement('tr');
      tr.append(
        cell(bid?.total ?? '', 'bid num'),
        cell(bid?.quantity ?? '', 'bid num'),
        cell(bid?.price ?? '', 'bid num price'),
        cell(ask?.price ?? '', 'ask num price'),
        cell(ask?.quantity ?? '', 'ask num'),
        cell(ask?.total ?? '', 'ask num'),
      );
      rows.push(tr);
    }
    body.replaceChildren(...rows);
    this.depthChart.show(b.bids, b.asks);
    el('depth-chart').setAttribute(
      'aria-label',
      `Depth chart: running totals of ${b.bids.length} bid and ${b.asks.length} ask levels (the table below has the figures).`,
    );
  }

  private appendChanges(rows: DeltaRow[]): void {
    const body = el('changes').querySelector('tbody') as HTMLElement;
    body.append(
      ...rows.map((r) => {
        const tr = document.createElement('tr');
        const go = document.createElement('button');
        go.type = 'button';
        go.className = 'link';
        go.textContent = showTime(parseTimestamp(r.ts));
        go.setAttribute('aria-label', `Show the book after the change of ${showTime(parseTimestamp(r.ts))} UTC`);
        go.addEventListener('click', () => this.setMoment(parseTimestamp(r.ts)));
        const when = document.createElement('td');
        when.append(go);
        const received = (r as DeltaRow & { received_ts?: string }).received_ts;
        const positive = !r.quantity_delta.startsWith('-');
        tr.append(
          when,
          cell(received === undefined ? '' : showTime(parseTimestamp(received)).slice(11)),
          cell(String(r.sequence), 'num'),
          cell(r.side, r.side),
          cell(r.price, `num ${r.side}`),
          cell(positive ? `+${r.quantity_delta}` : r.quantity_delta, `num ${positive ? 'up' : 'down'}`),
        );
        return tr;
      }),
    );
  }

  private renderSnippets(): void {
    const { exchange, ticker, at, depth } = this.state;
    const list = el('snippet-list');
    if (ticker === undefined || at === undefined) return list.replaceChildren();
    list.replaceChildren(
      ...snippets({ origin: this.origin, exchange, ticker, at, depth, keyed: this.key !== undefined }).map((s, i) => {
        const wrap = document.createElement('div');
        wrap.className = 'snippet';
        const h = document.createElement('h3');
        h.id = `snippet-${i}`;
        h.textContent = s.title;
        const pre = document.createElement('pre');
        const code = document.createElement('code');
        code.textContent = s.code;
        code.className = `language-${s.language}`;
        pre.append(code);
        pre.tabIndex = 0;
        pre.setAttribute('aria-labelledby', h.id);
        const copy = document.createElement('button');
        copy.type = 'button';
        copy.textContent = 'Copy';
        copy.setAttribute('aria-label', `Copy: ${s.title}`);
        copy.addEventListener('click', () => void this.copy(s.code, copy, code));
        wrap.append(h, pre, copy);
        return wrap;
      }),
    );
  }

  private async copy(text: string, button: HTMLButtonElement, code: HTMLElement): Promise<void> {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
    } catch {
      // No clipboard (a page served over plain HTTP to another host is not a secure context): select the text.
      const range = document.createRange();
      range.selectNodeContents(code);
      const selection = getSelection();
      selection?.removeAllRanges();
      selection?.addRange(range);
      button.textContent = 'Selected: press Ctrl+C';
    }
    setTimeout(() => (button.textContent = 'Copy'), 2500);
  }

  private resetTicker(keepTicker = false): void {
    for (const step of ['coverage', 'book', 'changes', 'prices'] as const) this.inflight.get(step)?.abort();
    clearTimeout(this.viewTimer);
    this.range = undefined;
    this.book = undefined;
    this.coverage = undefined;
    this.prices = undefined;
    this.pricesKey = undefined;
    this.priceChart.clear();
    el('price-chart').setAttribute('aria-label', 'Price chart: no ticker selected');
    el('prices-status').textContent = 'Pick a ticker.';
    (el('prices-h').parentElement as HTMLElement).dataset.state = 'empty';
    this.changes = [];
    this.changesCursor = null;
    if (!keepTicker) this.state.ticker = undefined;
    this.enableMoment(false);
    el<HTMLButtonElement>('prev-change').disabled = true;
    el<HTMLButtonElement>('next-change').disabled = true;
    this.timeline.clear();
    el('timeline').setAttribute('aria-label', 'Coverage timeline: no ticker selected');
    dlRows(el('coverage-summary'), []);
    el('gaps').querySelector('tbody')?.replaceChildren();
    el('window-note').textContent = '';
    el('levels').querySelector('tbody')?.replaceChildren();
    dlRows(el('book-best'), []);
    this.depthChart.clear();
    el('changes').querySelector('tbody')?.replaceChildren();
    el('changes-end').textContent = '';
    el('changes-more').hidden = true;
    el('snippet-list').replaceChildren();
    (el('coverage-h').parentElement as HTMLElement).dataset.state = 'empty';
    (el('changes-h').parentElement as HTMLElement).dataset.state = 'empty';
    this.showTrades();
    this.bookStatus('empty', 'Pick a ticker.');
  }

  // --- the address and the banner --------------------------------------------------------------------------------

  private writeHash(): void {
    const hash = formatHash(this.state);
    if (location.hash !== hash) history.replaceState(null, '', hash);
  }

  private problem(text: string, options: { retry: (() => void) | false; anonymous?: boolean }): void {
    this.retry = options.retry || undefined;
    el('banner-text').textContent = text;
    el('banner-retry').hidden = !options.retry;
    el('banner-anonymous').hidden = !options.anonymous;
    el('banner').hidden = false;
  }

  private clearProblem(): void {
    el('banner').hidden = true;
    el('banner-text').textContent = '';
    this.retry = undefined;
  }
}

// The skip link focuses the book without touching the address's fragment (which holds the view).
document.querySelector('a.skip')?.addEventListener('click', (e) => {
  e.preventDefault();
  el('book-h').focus();
});

new Explorer();
