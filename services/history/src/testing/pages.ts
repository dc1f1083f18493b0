/**
 * Reading the history API's answers in tests (src/testing/: not part of the build): every format parsed line by
 * line into rows, gap markers and the end line, and walks that follow next_cursor or the Link header page by page.
 * (A client's exact arithmetic on the answers' decimals and books is @depthgate/client's: Decimal, OrderBook.)
 */
import { gunzipSync } from 'node:zlib';
import request from 'supertest';
import type { Express } from 'express';
import { csvFields } from '@depthgate/test-utils';

export type Row = Record<string, string | number>;
export interface Gap {
  from_ts: string;
  to_ts: string;
  reason: string;
  detected_at: string;
}

/** One answer, whatever its format. */
export interface Page {
  status: number;
  headers: Record<string, string>;
  rows: Row[];
  /**
   * Rows and gaps in the order the body gave them (JSON: rows, then its gaps array, then its trades_gaps array).
   * With include=trades a trade is a row with `type: 'trade'`; a trades' gap marker is `{ gap, trades: true }`.
   */
  items: ({ row: Row } | { gap: Gap; trades?: true })[];
  /** The book's gaps (the trades endpoint: the trades'). */
  gaps: Gap[];
  /** Deltas with include=gaps,trades: the trades' gaps. */
  tradesGaps: Gap[];
  count: number;
  /** undefined when the body does not say (a JSON answer of the spec's form). */
  nextCursor: string | null | undefined;
  /** The Link rel="next" target, if any. */
  link: string | undefined;
  body: string;
}

const SNAPSHOT_COLUMNS = ['ts', 'side', 'price', 'quantity'];
const DELTA_COLUMNS = ['ts', 'sequence', 'side', 'price', 'quantity_delta'];
const TRADE_COLUMNS = ['ts', 'trade_id', 'price', 'size', 'side'];

/** Parses a body of any of the three formats. */
export function parseBody(contentType: string, body: string): Omit<Page, 'status' | 'headers' | 'link' | 'body'> {
  if (contentType.startsWith('application/json')) {
    const o = JSON.parse(body) as {
      rows: Row[];
      count: number;
      gaps?: Gap[];
      trades_gaps?: Gap[];
      next_cursor?: string | null;
    };
    return {
      rows: o.rows,
      items: [
        ...o.rows.map((row) => ({ row })),
        ...(o.gaps ?? []).map((gap) => ({ gap })),
        ...(o.trades_gaps ?? []).map((gap) => ({ gap, trades: true as const })),
      ],
      gaps: o.gaps ?? [],
      tradesGaps: o.trades_gaps ?? [],
      count: o.count,
      nextCursor: o.next_cursor,
    };
  }
  const lines = body.split('\n');
  if (lines.pop() !== '') throw new Error('the body does not end with a newline');
  const items: Page['items'] = [];
  let end: { count: number; next_cursor: string | null } | undefined;
  if (contentType.startsWith('application/x-ndjson')) {
    for (const line of lines) {
      if (end) throw new Error('a line after the end line');
      const o = JSON.parse(line) as Record<string, unknown>;
      if (o.type === 'gap' || o.type === 'trades_gap') {
        const { type, ...gap } = o;
        items.push(type === 'gap' ? { gap: gap as unknown as Gap } : { gap: gap as unknown as Gap, trades: true });
      } else if (o.type === 'end') end = o as unknown as typeof end;
      else items.push({ row: o as Row });
    }
  } else if (contentType.startsWith('text/csv')) {
    const header = (lines.shift() ?? '').split(',');
    const known =
      header[1] === 'sequence' ? DELTA_COLUMNS : header[1] === 'trade_id' ? TRADE_COLUMNS : SNAPSHOT_COLUMNS;
    if (header.slice(0, known.length).join() !== known.join())
      throw new Error(`unexpected CSV header ${header.join()}`);
    for (const line of lines) {
      if (end) throw new Error('a line after the end line');
      const f = csvFields(line);
      if (f[0] === '#gap' || f[0] === '#trades_gap') {
        const gap = { from_ts: f[1] ?? '', to_ts: f[2] ?? '', reason: f[3] ?? '', detected_at: f[4] ?? '' };
        items.push(f[0] === '#gap' ? { gap } : { gap, trades: true });
      } else if (f[0] === '#trade') {
        const row: Row = { type: 'trade' };
        ['ts', 'trade_id', 'price', 'size', 'side', 'received_ts'].forEach((name, i) => {
          if (f[i + 1] !== undefined) row[name] = f[i + 1] as string;
        });
        items.push({ row });
      } else if (f[0] === '#end') {
        end = { count: Number(f[1]), next_cursor: f[2] === '' || f[2] === undefined ? null : f[2] };
      } else {
        const row: Row = {};
        header.forEach((name, i) => (row[name] = name === 'sequence' ? Number(f[i]) : (f[i] ?? '')));
        items.push({ row });
      }
    }
  } else throw new Error(`unexpected content type ${contentType}`);
  if (!end) throw new Error('no end line: the stream was cut');
  const rows = items.flatMap((i) => ('row' in i ? [i.row] : []));
  return {
    rows,
    items,
    gaps: items.flatMap((i) => ('gap' in i && i.trades !== true ? [i.gap] : [])),
    tradesGaps: items.flatMap((i) => ('gap' in i && i.trades === true ? [i.gap] : [])),
    count: end.count,
    nextCursor: end.next_cursor,
  };
}

/** GET a path (with a key and headers), the body decompressed and parsed. */
export async function fetchPage(
  app: Express,
  path: string,
  key?: string,
  headers: Record<string, string> = {},
): Promise<Page> {
  let r = request(app)
    .get(path)
    .set({ 'accept-encoding': 'identity', ...headers })
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
  if (key) r = r.set('x-api-key', key);
  const res = await r;
  const raw = res.body as Buffer;
  // (superagent may have inflated it already.)
  const zipped = res.headers['content-encoding'] === 'gzip' && raw[0] === 0x1f && raw[1] === 0x8b;
  const body = (zipped ? gunzipSync(raw) : raw).toString('utf8');
  const headersOut = res.headers as Record<string, string>;
  const link = /^<([^>]+)>; rel="next"$/.exec(headersOut.link ?? '')?.[1];
  if (res.status !== 200) {
    return {
      status: res.status,
      headers: headersOut,
      rows: [],
      items: [],
      gaps: [],
      tradesGaps: [],
      count: 0,
      nextCursor: undefined,
      link,
      body,
    };
  }
  return { status: res.status, headers: headersOut, link, body, ...parseBody(headersOut['content-type'] ?? '', body) };
}

/**
 * Walks pages from `first`, following the body's next_cursor (or, with `via: 'link'`, the Link header) until an
 * answer is complete. Every page's items concatenated, and the pages.
 */
export async function walk(
  app: Express,
  first: string,
  key?: string,
  options: { via?: 'cursor' | 'link'; headers?: Record<string, string>; maxPages?: number } = {},
): Promise<{ pages: Page[]; items: Page['items']; rows: Row[]; gaps: Gap[]; tradesGaps: Gap[] }> {
  const pages: Page[] = [];
  let path: string | undefined = first;
  while (path !== undefined) {
    const page = await fetchPage(app, path, key, options.headers);
    if (page.status !== 200) throw new Error(`${path}: ${page.status} ${page.body}`);
    pages.push(page);
    if (pages.length > (options.maxPages ?? 10_000)) throw new Error('too many pages');
    if (options.via === 'link') path = page.link;
    else {
      const base = path.split('?')[0] as string;
      const params = new URLSearchParams(path.split('?')[1] ?? '');
      params.delete('start_ts');
      params.delete('end_ts');
      if (page.nextCursor) params.set('cursor', page.nextCursor);
      path = page.nextCursor ? `${base}?${params.toString()}` : undefined;
    }
  }
  const items = pages.flatMap((p) => p.items);
  return {
    pages,
    items,
    rows: items.flatMap((i) => ('row' in i ? [i.row] : [])),
    gaps: items.flatMap((i) => ('gap' in i && i.trades !== true ? [i.gap] : [])),
    tradesGaps: items.flatMap((i) => ('gap' in i && i.trades === true ? [i.gap] : [])),
  };
}

/** How many ClickHouse queries of a kind (`query` label: window, bars, exists…) the service has sent so far. */
export async function queriesSent(app: Express, query: string): Promise<number> {
  const text = (await request(app).get('/metrics')).text;
  const pattern = new RegExp(
    `^history_clickhouse_query_duration_seconds_count\\{[^}]*\\bquery="${query}"[^}]*\\} (\\d+)$`,
    'gm',
  );
  return [...text.matchAll(pattern)].map((m) => Number(m[1])).reduce((a, b) => a + b, 0);
}
