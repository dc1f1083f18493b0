/**
 * What is on screen as commands a reader can copy: curl lines for the endpoints the page called, and the same with
 * @depthgate/client. The key is never written into them: with a key in use they read it from `$DEPTHGATE_API_KEY`
 * (`process.env.DEPTHGATE_API_KEY`).
 */
import { formatTimestamp } from '@depthgate/client';
import type { Depth, ExchangeKey } from './state';

export interface SnippetContext {
  /** The service's origin, e.g. `http://127.0.0.1:7081`. */
  origin: string;
  exchange: ExchangeKey;
  ticker: string;
  at: number;
  depth: Depth;
  /** A key is in use (the snippets then send `$DEPTHGATE_API_KEY`). */
  keyed: boolean;
}

export interface Snippet {
  title: string;
  language: 'sh' | 'ts';
  code: string;
}

/** A shell word in single quotes (a URL with `&` and `?`), safe to paste. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function url(c: SnippetContext, endpoint: string, query: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, v);
  const s = q.toString();
  return `${c.origin}/api/${c.exchange}/${endpoint}/${encodeURIComponent(c.ticker)}${s ? `?${s}` : ''}`;
}

export function snippets(c: SnippetContext): Snippet[] {
  const key = c.keyed ? ' -H "x-api-key: $DEPTHGATE_API_KEY"' : '';
  const at = formatTimestamp(c.at);
  const after = formatTimestamp(c.at + 1);
  const depth = c.depth === null ? undefined : String(c.depth);
  const curl = (u: string, extra = '') => `curl -s --compressed${key}${extra} ${shellQuote(u)}`;
  const tsString = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const options = [`at: ${tsString(at)}`, ...(depth === undefined ? [] : [`depth: ${depth}`])].join(', ');
  return [
    {
      title: 'The book at this moment',
      language: 'sh',
      code: curl(url(c, 'book', { at, depth })),
    },
    {
      title: 'Coverage: what was recorded, and the gaps',
      language: 'sh',
      code: curl(url(c, 'coverage', {})),
    },
    {
      title: 'The changes after this moment (the first 100, then follow next_cursor)',
      language: 'sh',
      code: curl(url(c, 'deltas', { start_ts: after, limit: '100', fields: 'received_ts' })),
    },
    {
      title: 'Every change from this moment on, as a stream (NDJSON, with gap markers)',
      language: 'sh',
      code: curl(url(c, 'deltas', { start_ts: after, format: 'ndjson', include: 'gaps' })),
    },
    {
      title: 'The trades of the minute after this moment (NDJSON)',
      language: 'sh',
      code: curl(url(c, 'trades', { start_ts: after, end_ts: formatTimestamp(c.at + 60_000), format: 'ndjson' })),
    },
    {
      title: 'With @depthgate/client (Node or a browser)',
      language: 'ts',
      code: [
        `import { HistoryClient } from '@depthgate/client';`,
        ``,
        `const client = new HistoryClient({`,
        `  baseUrl: ${tsString(c.origin)},`,
        ...(c.keyed ? [`  apiKey: process.env.DEPTHGATE_API_KEY,`] : []),
        `});`,
        `const book = await client.book(${tsString(c.exchange)}, ${tsString(c.ticker)}, { ${options} });`,
        `console.log(book.status, book.bids?.[0], book.asks?.[0]);`,
        ``,
        `// Rebuild it here instead (rule 7), then replay the minute after it:`,
        `const local = await client.rebuild(${tsString(c.exchange)}, ${tsString(c.ticker)}, ${tsString(at)});`,
        `console.log(local.best(), local.spread());`,
        `for await (const event of client.replay(${tsString(c.exchange)}, ${tsString(c.ticker)}, { from: ${tsString(after)}, to: ${tsString(formatTimestamp(c.at + 60_000))} })) {`,
        `  if (event.type === 'gap') console.log('gap', event.gap.reason);`,
        `  else if (event.type === 'book') console.log(event.ts, event.book.best());`,
        `}`,
        ``,
        `// Changes and trades in the order they arrived, the book kept current (null inside a gap of the book):`,
        `for await (const event of client.events(${tsString(c.exchange)}, ${tsString(c.ticker)}, { from: ${tsString(after)}, to: ${tsString(formatTimestamp(c.at + 60_000))} })) {`,
        `  if (event.type === 'trade') console.log(event.ts, event.trade.side, event.trade.size, event.trade.price, event.book?.best());`,
        `}`,
      ].join('\n'),
    },
  ];
}
