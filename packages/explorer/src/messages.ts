/**
 * Every failure the page can meet, as a sentence a person can act on: which request, what the service said, what to
 * do. Built from @depthgate/client's typed errors (HttpError with the service's `{"error","message"}`,
 * TransportError for no answer, DataError for an answer that cannot be trusted).
 */
import { BookError, DataError, HttpError, TransportError } from '@depthgate/client';
import { showDuration } from './format';
import type { ExchangeKey } from './state';

export type Step = 'tickers' | 'coverage' | 'book' | 'changes' | 'prices';

export interface Problem {
  /** What kind of action helps: retry later, change the key, change the input. */
  kind: 'key' | 'input' | 'unavailable' | 'rate_limited' | 'data';
  text: string;
  /** A retry may help (the service was down or busy). */
  retry: boolean;
}

const STEP: Record<Step, string> = {
  tickers: 'the ticker list',
  coverage: 'the coverage',
  book: 'the book',
  changes: 'the changes',
  prices: 'the prices and trades',
};

export function describeProblem(
  err: unknown,
  c: { step: Step; exchange: ExchangeKey; ticker?: string; keyed: boolean; origin: string },
): Problem {
  const what = STEP[c.step];
  if (err instanceof HttpError) {
    // The service's own message (`{"error","message"}`); HttpError.message also names the request.
    const json = err.json as { message?: unknown } | undefined;
    const message = typeof json?.message === 'string' ? json.message : err.body.slice(0, 200);
    const said = err.error ? `${err.status} ${err.error}: ${message}` : `${err.status}: ${message}`;
    const id = err.requestId ? ` (request id ${err.requestId})` : '';
    switch (err.error) {
      case 'unauthorized':
        return {
          kind: 'key',
          retry: false,
          text: c.keyed
            ? `The service refused your API key: it is unknown or has been revoked (401 unauthorized). Enter another key, or continue anonymously (the last day of data).${id}`
            : `The service asked for a key (401 unauthorized).${id}`,
        };
      case 'unknown_ticker':
        return {
          kind: 'input',
          retry: false,
          text: `Unknown ticker ${JSON.stringify(c.ticker ?? '')} on ${c.exchange}: it was never recorded there${
            c.keyed ? ', or your key’s ticker_prefixes do not include it' : ''
          }. Pick one from the list.`,
        };
      case 'unknown_exchange':
        return { kind: 'input', retry: false, text: `The service does not know the exchange ${c.exchange}.` };
      case 'invalid_timestamp':
        return { kind: 'input', retry: false, text: `The service refused the moment: ${message}` };
      case 'rate_limited': {
        const wait = err.retryAfterMs === undefined ? '' : ` Try again in ${showDuration(err.retryAfterMs)}.`;
        return {
          kind: 'rate_limited',
          retry: true,
          text: `Too many requests for ${what} (429 rate_limited).${wait}${
            c.keyed ? '' : ' Anonymous callers share a small budget per address; a key has its own.'
          }`,
        };
      }
      case 'service_unavailable':
      case 'query_timeout':
        return {
          kind: 'unavailable',
          retry: true,
          text: `The history service could not answer ${what} right now (${said}).${id}`,
        };
      default:
        return {
          kind: err.status >= 500 ? 'unavailable' : 'input',
          retry: err.status >= 500,
          text: `The service answered ${said} for ${what}.${id}`,
        };
    }
  }
  if (err instanceof TransportError) {
    if (err.code === 'timeout') {
      return {
        kind: 'unavailable',
        retry: true,
        text: `The history service did not answer ${what} in time. It may be overloaded; retry.`,
      };
    }
    return {
      kind: 'unavailable',
      retry: true,
      text: `Cannot reach the history service at ${c.origin} for ${what}: it is down or restarting, or the network is. Retry when it is back.`,
    };
  }
  if (err instanceof BookError) {
    // The client rebuilds the book of the window in view; what stops it is named, never papered over.
    return {
      kind: 'data',
      retry: false,
      text: `The book for ${what} could not be rebuilt in your window (${err.code}): ${err.message}`,
    };
  }
  if (err instanceof DataError) {
    return {
      kind: 'data',
      retry: true,
      text: `The answer for ${what} could not be read (${err.code}): ${err.message}`,
    };
  }
  return { kind: 'data', retry: true, text: `Something failed while loading ${what}: ${String(err)}` };
}

export interface WindowInfo {
  start_ts: string;
  rule: 'anonymous' | 'max_data_age_days' | 'full_history_prefix' | 'full_history';
  days: number | null;
}

/** Why the caller sees what it sees of a ticker (the coverage answer's `window`). */
export function windowText(w: WindowInfo, ticker: string): string {
  const since = `${w.start_ts.replace('T', ' ').replace('Z', '')} UTC`;
  const days = (n: number | null) => (n === 1 ? 'the last day' : `the last ${n ?? '?'} days`);
  switch (w.rule) {
    case 'anonymous':
      return `Your window for ${ticker} starts ${since}: anonymous callers see ${days(w.days)}. Older data is not shown; an API key with a longer window shows it.`;
    case 'max_data_age_days':
      return `Your window for ${ticker} starts ${since}: your key sees ${days(w.days)} (its max_data_age_days). Older data is not shown to this key.`;
    case 'full_history_prefix':
      return `Your key has the full history of ${ticker} (one of its full_history_prefixes matches it): everything since ${since}.`;
    case 'full_history':
      return `Your key sees all recorded history: everything since ${since}.`;
  }
}
