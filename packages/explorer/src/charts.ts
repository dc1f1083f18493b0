/**
 * The page's charts, drawn by uPlot (a small canvas charting library for time series and numeric axes):
 *
 * - `Timeline`: the caller's window on a UTC time axis, the recorded span as an area, every recorded gap as a red
 *   band (its reason and bounds in a tooltip on hover), and the chosen moment as a line; a click picks a moment, a
 *   drag zooms in (the window in view, which the price chart follows), a double click zooms out.
 * - `PriceChart`: over the window in view, the best bid and best ask as step lines and every trade as a point whose
 *   area is its size (green a buy, red a sell; the trade under the pointer in a tooltip), the gaps of the book and of
 *   the trades as bands, the moment as a line; a click picks a moment, a drag zooms the timeline.
 * - `DepthChart`: the book's running totals per side against price (bids left of the spread, asks right).
 *
 * They resize with their container. None is the only way to read what it shows: the coverage summary, the gaps
 * table, the book's figures, the time-and-sales list and the levels table carry the same information for keyboards
 * and screen readers.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Gap } from '@depthgate/client';
import { parseTimestamp } from '@depthgate/client';
import { depthSeries, plotNumber, showDuration, showTime, type Level } from './format';
import { largestSize, priceRange, tradeRadius, type ChartTrade, type PriceData } from './prices';

/** Colours with at least 4.5:1 contrast on the panels' white (styles.css repeats them as variables). */
export const THEME = {
  text: '#1f2933',
  grid: '#e4e7eb',
  recorded: '#1d4ed8',
  recordedFill: 'rgba(29, 78, 216, 0.14)',
  gap: '#b42318',
  gapFill: 'rgba(180, 35, 24, 0.35)',
  moment: '#111827',
  bid: '#0f7a3a',
  bidFill: 'rgba(15, 122, 58, 0.18)',
  ask: '#b42318',
  askFill: 'rgba(180, 35, 24, 0.16)',
  buyFill: 'rgba(15, 122, 58, 0.45)',
  sellFill: 'rgba(180, 35, 24, 0.45)',
  tradesGapFill: 'rgba(180, 83, 9, 0.22)',
};

const AXIS = {
  stroke: THEME.text,
  grid: { stroke: THEME.grid, width: 1 },
  ticks: { stroke: THEME.grid, width: 1 },
  font: '12px system-ui, sans-serif',
};

/** A filled step line (`align` 1: each value holds until the next point; -1: from the previous one). */
function steppedArea(label: string, stroke: string, fill: string, width: number, align: 1 | -1): uPlot.Series {
  return { label, stroke, fill, width, paths: uPlot.paths.stepped?.({ align }), points: { show: false } };
}

/** uPlot sized to its container, following it as it resizes. */
abstract class Chart {
  protected plot: uPlot | undefined;
  private readonly resize: ResizeObserver;

  constructor(
    protected readonly container: HTMLElement,
    private readonly height: number,
  ) {
    this.resize = new ResizeObserver(() => this.plot?.setSize(this.size()));
    this.resize.observe(container);
  }

  protected size(): { width: number; height: number } {
    return { width: Math.max(200, Math.floor(this.container.clientWidth)), height: this.height };
  }

  protected mount(options: Omit<uPlot.Options, 'width' | 'height'>, data: uPlot.AlignedData): void {
    this.plot?.destroy();
    this.plot = new uPlot({ ...options, ...this.size() }, data, this.container);
  }
}

interface GapSpan {
  gap: Gap;
  from: number;
  to: number;
}

/** Gap bands over a chart's plot area, clipped to the x range shown. */
function drawBands(u: uPlot, gaps: readonly GapSpan[], fill: string, stroke: string | undefined): void {
  const ctx = u.ctx;
  const { top, height } = u.bbox;
  const [lo, hi] = [u.scales.x?.min ?? 0, u.scales.x?.max ?? 1];
  ctx.save();
  ctx.fillStyle = fill;
  if (stroke) ctx.strokeStyle = stroke;
  ctx.lineWidth = devicePixelRatio;
  for (const g of gaps) {
    if (g.to < lo || g.from > hi) continue;
    const x0 = u.valToPos(Math.max(g.from, lo), 'x', true);
    const x1 = u.valToPos(Math.min(g.to, hi), 'x', true);
    const w = Math.max(3 * devicePixelRatio, x1 - x0);
    ctx.fillRect(x0, top, w, height);
    if (stroke) ctx.strokeRect(x0, top, w, height);
  }
  ctx.restore();
}

/** The chosen moment as a vertical line. */
function drawMoment(u: uPlot, ms: number | undefined): void {
  if (ms === undefined) return;
  const ctx = u.ctx;
  const { top, height } = u.bbox;
  const x = Math.round(u.valToPos(ms, 'x', true));
  ctx.save();
  ctx.strokeStyle = THEME.moment;
  ctx.lineWidth = 2 * devicePixelRatio;
  ctx.beginPath();
  ctx.moveTo(x, top);
  ctx.lineTo(x, top + height);
  ctx.stroke();
  ctx.restore();
}

const spans = (gaps: readonly Gap[]): GapSpan[] =>
  gaps.map((g) => ({ gap: g, from: parseTimestamp(g.from_ts), to: parseTimestamp(g.to_ts) }));

/** Places a tooltip under a chart at the pointer's x. */
function placeTip(tip: HTMLElement, container: HTMLElement, u: uPlot, left: number): void {
  const box = container.getBoundingClientRect();
  const parent = (tip.offsetParent ?? document.body).getBoundingClientRect();
  const x = box.left - parent.left + u.bbox.left / devicePixelRatio + left;
  tip.style.left = `${Math.max(0, Math.min(x, parent.width - tip.offsetWidth))}px`;
  tip.style.top = `${box.bottom - parent.top + 4}px`;
}

/**
 * The coverage timeline. `onPick` gets the moment (epoch ms) a click chose; `onView` the window in view whenever it
 * changes (a drag zooms in, a double click zooms out).
 */
export class Timeline extends Chart {
  private gaps: GapSpan[] = [];
  private moment: number | undefined;
  private range: [number, number] = [0, 1];

  constructor(
    container: HTMLElement,
    private readonly tip: HTMLElement,
    private readonly onPick: (ms: number) => void,
    private readonly onView: (from: number, to: number) => void = () => undefined,
  ) {
    super(container, 120);
  }

  /** The window in view: the x scale's range (the whole window until zoomed). */
  view(): { from: number; to: number } {
    const x = this.plot?.scales.x;
    return { from: Math.round(x?.min ?? this.range[0]), to: Math.round(x?.max ?? this.range[1]) };
  }

  /** Zooms to [from, to] (the price chart's drag); no range: the whole window. */
  zoom(from?: number, to?: number): void {
    if (!this.plot) return;
    const [lo, hi] = this.range;
    this.plot.setScale('x', { min: Math.max(lo, from ?? lo), max: Math.min(hi, to ?? hi) });
  }

  /**
   * Shows the window `[from, to]`, the recorded span `[first, last]` (none when nothing was recorded) and the gaps.
   */
  show(window: { from: number; to: number }, recorded: { first: number; last: number } | undefined, gaps: Gap[]) {
    this.range = [window.from, Math.max(window.to, window.from + 1000)];
    this.gaps = spans(gaps);
    const [lo, hi] = this.range;
    // A step function over the window: 1 from the first recorded row to the last, 0 elsewhere.
    const xs: number[] = [];
    const ys: number[] = [];
    const point = (x: number, y: number) => {
      if (xs[xs.length - 1] === x) ys[ys.length - 1] = y;
      else {
        xs.push(x);
        ys.push(y);
      }
    };
    point(lo, 0);
    if (recorded) {
      point(Math.max(lo, recorded.first), 1);
      point(Math.min(hi, Math.max(recorded.last, recorded.first + 1)), 0);
    }
    point(hi, 0);
    this.container.dataset.gaps = String(this.gaps.length);
    this.container.dataset.from = String(lo);
    this.container.dataset.to = String(hi);
    this.mount(
      {
        ms: 1,
        tzDate: (ts) => uPlot.tzDate(new Date(ts), 'Etc/UTC'),
        legend: { show: false },
        // Drag across the timeline to zoom in; a double click zooms out again (uPlot's own gestures).
        cursor: { y: false, points: { show: false }, drag: { x: true, y: false, setScale: true } },
        // The data runs from the window's start to its end, so the x scale spans exactly the window.
        scales: { x: { time: true }, y: { range: [0, 1.15] } },
        axes: [{ ...AXIS }, { show: false }],
        series: [{}, steppedArea('recorded', THEME.recorded, THEME.recordedFill, 1, 1)],
        hooks: {
          draw: [(u) => this.drawOverlays(u)],
          setCursor: [(u) => this.showTip(u)],
          setScale: [
            (u, key) => {
              if (key !== 'x' || u.scales.x?.min === undefined || u.scales.x.max === undefined) return;
              const { from, to } = this.view();
              this.container.dataset.viewFrom = String(from);
              this.container.dataset.viewTo = String(to);
              this.onView(from, to);
            },
          ],
          ready: [
            (u) => {
              u.over.addEventListener('click', () => {
                const left = u.cursor.left;
                if (left === undefined || left < 0) return;
                this.onPick(Math.round(u.posToVal(left, 'x')));
              });
              u.over.addEventListener('mouseleave', () => (this.tip.hidden = true));
            },
          ],
        },
      },
      [xs, ys],
    );
  }

  clear(): void {
    this.gaps = [];
    this.moment = undefined;
    delete this.container.dataset.gaps;
    this.tip.hidden = true;
    this.plot?.destroy();
    this.plot = undefined;
  }

  /** Moves the moment line. */
  setMoment(ms: number | undefined): void {
    this.moment = ms;
    this.plot?.redraw(false);
  }

  private drawOverlays(u: uPlot): void {
    drawBands(u, this.gaps, THEME.gapFill, THEME.gap);
    drawMoment(u, this.moment);
  }

  /** The gap under the pointer (bands at least 3 px wide, as drawn), else the time. */
  private showTip(u: uPlot): void {
    const left = u.cursor.left;
    if (left === undefined || left < 0) {
      this.tip.hidden = true;
      return;
    }
    const at = u.posToVal(left, 'x');
    const hit = this.gaps.find((g) => {
      const x0 = u.valToPos(Math.max(g.from, this.range[0]), 'x');
      const x1 = Math.max(x0 + 3, u.valToPos(Math.min(g.to, this.range[1]), 'x'));
      return left >= x0 - 1 && left <= x1 + 1;
    });
    this.tip.textContent = hit
      ? `Gap (${hit.gap.reason}): ${showTime(hit.from)} – ${showTime(hit.to)} UTC, ${showDuration(hit.to - hit.from)}: not recorded`
      : `${showTime(Math.round(at))} UTC — click to see the book then`;
    this.tip.dataset.kind = hit ? 'gap' : 'time';
    this.tip.hidden = false;
    placeTip(this.tip, this.container, u, left);
  }
}

/**
 * The price chart of the window in view. `onPick` gets the moment a click chose; `onZoom` the range a drag selected
 * (undefined: a double click, back to the whole window).
 */
export class PriceChart extends Chart {
  private data: PriceData | undefined;
  private bookGaps: GapSpan[] = [];
  private tradeGaps: GapSpan[] = [];
  private largest = 0;
  private moment: number | undefined;
  private dragged = false;

  constructor(
    container: HTMLElement,
    private readonly tip: HTMLElement,
    private readonly onPick: (ms: number) => void,
    private readonly onZoom: (from?: number, to?: number) => void,
  ) {
    super(container, 260);
  }

  show(data: PriceData): void {
    this.data = data;
    this.bookGaps = spans(data.bookGaps);
    this.tradeGaps = spans(data.tradeGaps);
    this.largest = largestSize(data.trades);
    const [ymin, ymax] = priceRange(data);
    const d = this.container.dataset;
    d.from = String(data.from);
    d.to = String(data.to);
    d.ymin = String(ymin);
    d.ymax = String(ymax);
    d.points = String(data.xs.length);
    d.trades = String(data.trades.length);
    d.lastBid = data.lastBid ?? '';
    d.lastAsk = data.lastAsk ?? '';
    this.mount(
      {
        ms: 1,
        tzDate: (ts) => uPlot.tzDate(new Date(ts), 'Etc/UTC'),
        legend: { show: false },
        cursor: { y: false, points: { show: false }, drag: { x: true, y: false, setScale: false } },
        scales: {
          x: { time: true, auto: false, range: () => [data.from, Math.max(data.to, data.from + 1)] },
          y: { auto: false, range: () => [ymin, ymax] },
        },
        axes: [{ ...AXIS }, { ...AXIS, label: 'price', labelFont: AXIS.font, size: 60 }],
        series: [
          {},
          // A best price holds until the next change (a gap ends the line: null).
          {
            label: 'best bid',
            stroke: THEME.bid,
            width: 2,
            paths: uPlot.paths.stepped?.({ align: 1 }),
            points: { show: false },
          },
          {
            label: 'best ask',
            stroke: THEME.ask,
            width: 2,
            paths: uPlot.paths.stepped?.({ align: 1 }),
            points: { show: false },
          },
        ],
        hooks: {
          drawClear: [(u) => this.drawBands(u)],
          draw: [(u) => this.drawTrades(u)],
          setCursor: [(u) => this.showTip(u)],
          setSelect: [(u) => this.selected(u)],
          ready: [
            (u) => {
              u.over.addEventListener('click', () => {
                const left = u.cursor.left;
                if (this.dragged || left === undefined || left < 0) return;
                this.onPick(Math.round(u.posToVal(left, 'x')));
              });
              u.over.addEventListener('mousedown', () => (this.dragged = false));
              u.over.addEventListener('dblclick', () => this.onZoom());
              u.over.addEventListener('mouseleave', () => (this.tip.hidden = true));
            },
          ],
        },
      },
      [data.xs, data.bids, data.asks],
    );
  }

  clear(): void {
    this.data = undefined;
    this.moment = undefined;
    this.tip.hidden = true;
    for (const k of ['from', 'to', 'ymin', 'ymax', 'points', 'trades', 'lastBid', 'lastAsk']) {
      delete this.container.dataset[k];
    }
    this.plot?.destroy();
    this.plot = undefined;
  }

  setMoment(ms: number | undefined): void {
    this.moment = ms;
    this.plot?.redraw(false);
  }

  private drawBands(u: uPlot): void {
    drawBands(u, this.bookGaps, THEME.gapFill, undefined);
    drawBands(u, this.tradeGaps, THEME.tradesGapFill, undefined);
  }

  private drawTrades(u: uPlot): void {
    const trades = this.data?.trades ?? [];
    const ctx = u.ctx;
    ctx.save();
    ctx.lineWidth = devicePixelRatio;
    for (const t of trades) {
      const x = u.valToPos(t.at, 'x', true);
      const y = u.valToPos(plotNumber(t.price), 'y', true);
      ctx.beginPath();
      ctx.arc(x, y, tradeRadius(t.size, this.largest) * devicePixelRatio, 0, 2 * Math.PI);
      ctx.fillStyle = t.side === 'buy' ? THEME.buyFill : THEME.sellFill;
      ctx.strokeStyle = t.side === 'buy' ? THEME.bid : THEME.ask;
      ctx.fill();
      ctx.stroke();
    }
    ctx.restore();
    drawMoment(u, this.moment);
  }

  /** The trade under the pointer (within its point, or 3 px of it), else the time there. */
  private hit(u: uPlot, left: number, top: number): ChartTrade | undefined {
    let best: ChartTrade | undefined;
    let bestDistance = Infinity;
    for (const t of this.data?.trades ?? []) {
      const dx = u.valToPos(t.at, 'x') - left;
      if (Math.abs(dx) > 13) continue;
      const dy = u.valToPos(plotNumber(t.price), 'y') - top;
      const distance = Math.hypot(dx, dy);
      if (distance <= tradeRadius(t.size, this.largest) + 3 && distance < bestDistance) {
        best = t;
        bestDistance = distance;
      }
    }
    return best;
  }

  private showTip(u: uPlot): void {
    const { left, top } = u.cursor;
    if (left === undefined || left < 0 || top === undefined) {
      this.tip.hidden = true;
      return;
    }
    const t = this.hit(u, left, top);
    this.tip.textContent = t
      ? `Trade ${t.side} ${t.size} at ${t.price}, ${showTime(t.at)} UTC (id ${t.trade_id})`
      : `${showTime(Math.round(u.posToVal(left, 'x')))} UTC — click to see the book then`;
    this.tip.dataset.kind = t ? 'trade' : 'time';
    if (t) this.tip.dataset.trade = t.trade_id;
    else delete this.tip.dataset.trade;
    this.tip.hidden = false;
    placeTip(this.tip, this.container, u, left);
  }

  private selected(u: uPlot): void {
    const { left, width } = u.select;
    if (width < 4) return;
    this.dragged = true;
    const from = Math.round(u.posToVal(left, 'x'));
    const to = Math.round(u.posToVal(left + width, 'x'));
    u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
    this.onZoom(from, to);
  }
}

/** The depth chart of a book (levels best first, as the service sends them). */
export class DepthChart extends Chart {
  constructor(container: HTMLElement) {
    super(container, 220);
  }

  show(bids: readonly Level[], asks: readonly Level[]): void {
    const { x, bids: b, asks: a } = depthSeries(bids, asks);
    this.container.dataset.points = String(x.length);
    this.mount(
      {
        legend: { show: false },
        cursor: { points: { show: false }, drag: { x: false, y: false, setScale: false } },
        scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.05 : 1] } },
        axes: [
          { ...AXIS, label: 'price', labelFont: AXIS.font },
          { ...AXIS, label: 'total size', labelFont: AXIS.font, size: 60 },
        ],
        series: [
          {},
          // A bid level's total holds down to the next lower price, an ask level's up to the next higher one.
          steppedArea('bids', THEME.bid, THEME.bidFill, 2, -1),
          steppedArea('asks', THEME.ask, THEME.askFill, 2, 1),
        ],
      },
      [x, b, a],
    );
  }

  clear(): void {
    this.container.dataset.points = '0';
    this.plot?.destroy();
    this.plot = undefined;
  }
}
