/**
 * What the page shows, as it is written in the address's fragment, so a view can be bookmarked and shared:
 *
 *   #/venue_b/KXBTCD-26MAR07-T100000?at=2026-11-22T11:00:00.000Z&depth=10
 *
 * The key is never part of it (nor of any URL). Parsing is strict and says what it could not read, so a bad link
 * gives a visible message instead of a silently different view.
 */
import { EXCHANGES, formatTimestamp, momentMs, type Exchange } from '@depthgate/client';

/** The recorded exchanges, as the client lists them (generated from the platform registry). */
export { EXCHANGES };
export type ExchangeKey = Exchange;

/** Levels per side the page offers; null is every level. */
export const DEPTHS = [5, 10, 25, 50, null] as const;
export type Depth = (typeof DEPTHS)[number];
export const DEFAULT_DEPTH: Depth = 10;

export interface ViewState {
  exchange: ExchangeKey;
  ticker?: string;
  /** The moment, epoch ms (undefined: the newest recorded moment of the ticker). */
  at?: number;
  depth: Depth;
}

/** The history service's ticker grammar (`TICKER_PATTERN` of @depthgate/history-store). */
const TICKER = /^[A-Za-z0-9._-]{1,128}$/;

export function exchangeOf(text: string): ExchangeKey | undefined {
  const t = text.toLowerCase();
  return EXCHANGES.find((e) => e.key === t || (e.aliases as readonly string[]).includes(t))?.key;
}

/**
 * The exchanges with their aliases, as the history service's 404 `unknown_exchange` names them (`Exchanges.describe`
 * of @depthgate/platforms): `venue_b (kalshi), venue_c (gemini), …` — from the same registry, through the client's
 * generated `EXCHANGES`.
 */
export const KNOWN_EXCHANGES = EXCHANGES.map((e) =>
  e.aliases.length > 0 ? `${e.key} (${(e.aliases as readonly string[]).join(', ')})` : e.key,
).join(', ');

/** Why an exchange in the address is unknown, in the history service's words (its 404 `unknown_exchange`). */
export function unknownExchange(given: string): string {
  // `venue-b`, `venue-a-us`: the gateway's spelling (its platform keys use "-"; exchange keys use "_").
  const underscored = given.includes('-') ? exchangeOf(given.replace(/-/g, '_')) : undefined;
  const rule = underscored
    ? ` ("-" spells the gateway's platform keys; the history's exchange keys use "_": ${underscored})`
    : '';
  return `Unknown exchange ${JSON.stringify(clip(given))} in the address${rule}: use ${KNOWN_EXCHANGES}.`;
}

export function exchangeName(key: ExchangeKey): string {
  return EXCHANGES.find((e) => e.key === key)?.name ?? key;
}

/** Reads a fragment (with or without its `#`); problems name what was ignored and why. */
export function parseHash(hash: string): { state: ViewState; problems: string[] } {
  const state: ViewState = { exchange: EXCHANGES[0].key, depth: DEFAULT_DEPTH };
  const problems: string[] = [];
  const text = hash.replace(/^#/, '');
  if (text === '' || text === '/') return { state, problems };
  const q = text.indexOf('?');
  const path = q === -1 ? text : text.slice(0, q);
  const query = new URLSearchParams(q === -1 ? '' : text.slice(q + 1));
  const parts = path
    .replace(/^\/+/, '')
    .split('/')
    .map((p) => safeDecode(p));
  const [exchangeText, tickerText, ...rest] = parts;
  if (exchangeText) {
    const exchange = exchangeOf(exchangeText);
    if (exchange) state.exchange = exchange;
    else {
      problems.push(unknownExchange(exchangeText));
      return { state, problems };
    }
  }
  if (tickerText) {
    if (TICKER.test(tickerText)) state.ticker = tickerText;
    else problems.push(`${JSON.stringify(clip(tickerText))} in the address is not a ticker (letters, digits, . _ -).`);
  }
  if (rest.some((p) => p !== '')) problems.push('The address has more after the ticker than this page reads.');
  const at = query.get('at');
  if (at !== null) {
    const ms = momentMs(at);
    if (Number.isNaN(ms)) {
      problems.push(
        `${JSON.stringify(clip(at))} in the address is not a time (RFC 3339, or 13-digit epoch milliseconds).`,
      );
    } else state.at = ms;
  }
  const depth = query.get('depth');
  if (depth !== null) {
    const parsed = depthOf(depth);
    if (parsed === undefined) problems.push(`depth=${clip(depth)} in the address: use 5, 10, 25, 50 or all.`);
    else state.depth = parsed;
  }
  return { state, problems };
}

export function formatHash(state: ViewState): string {
  let out = `#/${state.exchange}`;
  if (state.ticker === undefined) return out;
  out += `/${encodeURIComponent(state.ticker)}`;
  const q = new URLSearchParams();
  if (state.at !== undefined) q.set('at', formatTimestamp(state.at));
  if (state.depth !== DEFAULT_DEPTH) q.set('depth', state.depth === null ? 'all' : String(state.depth));
  const s = q.toString();
  return s ? `${out}?${s}` : out;
}

/** `5`, `10`, `25`, `50` or `all` (null); undefined for anything else. */
export function depthOf(text: string): Depth | undefined {
  if (text === 'all') return null;
  return DEPTHS.find((d) => d !== null && String(d) === text);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
