/**
 * The page's two charts, drawn by uPlot (a small canvas charting library for time series and numeric axes):
 *
 * - `Timeline`: the caller's window on a UTC time axis, the recorded span as an area, every recorded gap as a red
 *   band (its reason and bounds in a tooltip on hover), and the chosen moment as a line; a click picks a moment.
 * - `DepthChart`: the book's running totals per side against price (bids left of the spread, asks right).
 *
 * Both resize with their container. Neither is the only way to read what it shows: the coverage summary, the gaps
 * table and the levels table carry the same information for keyboards and screen readers.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Gap } from '@depthgate/client';
import { parseTimestamp } from '@depthgate/client';
import { depthSeries, showDuration, showTime, type Level } from './format';

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

/** The coverage timeline. `onPick` gets the moment (epoch ms) a click chose. */
export class Timeline extends Chart {
  private gaps: GapSpan[] = [];
  private moment: number | undefined;
  private range: [number, number] = [0, 1];

  constructor(
    container: HTMLElement,
    private readonly tip: HTMLElement,
    private readonly onPick: (ms: number) => void,
  ) {
    super(container, 120);
  }

  /**
   * Shows the window `[from, to]`, the recorded span `[first, last]` (none when nothing was recorded) and the gaps.
   */
  show(window: { from: number; to: number }, recorded: { first: number; last: number } | undefined, gaps: Gap[]) {
    this.range = [window.from, Math.max(window.to, window.from + 1000)];
    this.gaps = gaps.map((g) => ({ gap: g, from: parseTimestamp(g.from_ts), to: parseTimestamp(g.to_ts) }));
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
    const ctx = u.ctx;
    const { top, height } = u.bbox;
    const minWidth = 3 * devicePixelRatio;
    ctx.save();
    ctx.fillStyle = THEME.gapFill;
    ctx.strokeStyle = THEME.gap;
    ctx.lineWidth = devicePixelRatio;
    for (const g of this.gaps) {
      const x0 = u.valToPos(Math.max(g.from, this.range[0]), 'x', true);
      const x1 = u.valToPos(Math.min(g.to, this.range[1]), 'x', true);
      const w = Math.max(minWidth, x1 - x0);
      ctx.fillRect(x0, top, w, height);
      ctx.strokeRect(x0, top, w, height);
    }
    if (this.moment !== undefined) {
      const x = Math.round(u.valToPos(this.moment, 'x', true));
      ctx.strokeStyle = THEME.moment;
      ctx.lineWidth = 2 * devicePixelRatio;
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, top + height);
      ctx.stroke();
    }
    ctx.restore();
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
    const box = this.container.getBoundingClientRect();
    const parent = (this.tip.offsetParent ?? document.body).getBoundingClientRect();
    const x = box.left - parent.left + u.bbox.left / devicePixelRatio + left;
    this.tip.style.left = `${Math.max(0, Math.min(x, parent.width - this.tip.offsetWidth))}px`;
    this.tip.style.top = `${box.bottom - parent.top + 4}px`;
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
