/**
 * A paged window played in slices: the engine (replayPaged) yields only when a step gives a message or its next page
 * has not arrived, so a page whose rows give nothing — a market whose book is applied but not sent (Kalshi's `trade`
 * alone, Coinbase's `matches` alone) — would be played whole in one turn of the event loop (a 10,000-row page of a
 * deep book: hundreds of milliseconds in which the process answers nobody). `sliced` hands the engine each page in
 * slices of about `rows` rows, each after the first once the event loop has turned (setImmediate): the engine then
 * waits (a PageWait) at most `rows` rows after it last did, whatever those rows gave. The slices are pages as the
 * engine reads them (a millisecond never split; every gap of the page listed again: the engine plays each once), so
 * the messages are the same; the next page is still asked for as soon as the one before arrives (read-ahead of one).
 */
import type { PagedWindow, WindowPage } from './replay';

/** A page in slices of at least `rows` rows (the last may have fewer), each up to the end of its last millisecond. */
export function slicesOf(page: WindowPage, rows: number): WindowPage[] {
  const { deltas, trades } = page;
  if (deltas.length + trades.length <= rows) return [page];
  const slices: WindowPage[] = [];
  let di = 0;
  let ti = 0;
  for (;;) {
    // `rows` rows in time order, then the rest of the last one's millisecond.
    let dEnd = di;
    let tEnd = ti;
    let at = Number.NEGATIVE_INFINITY;
    for (let n = 0; n < rows && (dEnd < deltas.length || tEnd < trades.length); n++) {
      const d = deltas[dEnd];
      const t = trades[tEnd];
      if (d && (!t || d.ts <= t.ts)) at = deltas[dEnd++]?.ts ?? at;
      else at = trades[tEnd++]?.ts ?? at;
    }
    while (deltas[dEnd]?.ts === at) dEnd++;
    while (trades[tEnd]?.ts === at) tEnd++;
    const next = Math.min(deltas[dEnd]?.ts ?? Infinity, trades[tEnd]?.ts ?? Infinity);
    const last = next === Infinity;
    slices.push({
      deltas: deltas.slice(di, dEnd),
      trades: trades.slice(ti, tEnd),
      gaps: page.gaps,
      until: last ? page.until : next,
    });
    if (last) return slices;
    di = dEnd;
    ti = tEnd;
  }
}

/** A page asked for: what `nextPage` gave, or what it threw. */
type Asked = { page: WindowPage | Promise<WindowPage> } | { error: unknown };

/** `window` with its pages handed out in slices of about `rows` rows (above). */
export function sliced(window: PagedWindow, rows: number): PagedWindow {
  /** The page of the slice handed out last, and its slices not handed out yet. */
  let current: WindowPage | undefined;
  let queue: WindowPage[] = [];
  /** The page after `current`, once asked for. */
  let ahead: Asked | undefined;
  let askedAfter: WindowPage | undefined;
  const ask = (): Asked => {
    try {
      const page = window.nextPage();
      // A rejection is the engine's when it asks for this page (an abandoned replay never does): handled here.
      if (page instanceof Promise) page.catch(() => undefined);
      return { page };
    } catch (error) {
      return { error };
    }
  };
  const arrived = (page: WindowPage): WindowPage => {
    current = page;
    queue = slicesOf(page, rows);
    return queue.shift() as WindowPage;
  };
  const out: PagedWindow = {
    ...window,
    nextPage() {
      // The engine asks as it starts playing the slice handed out last: the page after that slice's is read
      // meanwhile, as the engine reads a page ahead of the one it plays.
      if (current && current.until !== Infinity && askedAfter !== current) {
        askedAfter = current;
        ahead = ask();
      }
      const slice = queue.shift();
      if (slice) return new Promise<WindowPage>((resolve) => setImmediate(() => resolve(slice)));
      const next = ahead ?? ask();
      ahead = undefined;
      if ('error' in next) throw next.error;
      return next.page instanceof Promise ? next.page.then(arrived) : arrived(next.page);
    },
  };
  if (window.lastTrade) out.lastTrade = window.lastTrade;
  return out;
}
