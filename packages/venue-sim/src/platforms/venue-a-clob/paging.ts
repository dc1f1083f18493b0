// https://docs.polymarket.com/developers/CLOB/markets/get-markets (next_cursor paging)
import { json, type SimResponse } from '../../http/types';

/**
 * The CLOB's cursors [V]: `next_cursor` is the base64 of the offset of the next page's first item, `"MA=="` (0) or
 * `""` is the beginning and `"LTE="` (base64 of -1) the end. Every paged answer carries `data` (an array, possibly
 * empty) and a `next_cursor`; the libraries loop until they see `"LTE="` (clob-client's `END_CURSOR`).
 */
export const END_CURSOR = 'LTE=';

export interface Page<T> {
  limit: number;
  count: number;
  next_cursor: string;
  data: T[];
}

const encode = (offset: number) => Buffer.from(String(offset)).toString('base64');

/** The offset a cursor points at: 0 for none, -1 for the end, null when it is not one of ours. */
function decodeCursor(cursor: string | null): number | null {
  if (cursor === null || cursor === '') return 0;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(cursor)) return null;
  const text = Buffer.from(cursor, 'base64').toString('utf8');
  if (text === '-1') return -1;
  return /^\d{1,9}$/.test(text) ? Number(text) : null;
}

/** The page of `items` at `next_cursor` (query parameter), or the CLOB's 400 for a cursor it did not issue. */
export function cursorPage<T>(items: readonly T[], params: URLSearchParams, pageSize: number): Page<T> | SimResponse {
  const offset = decodeCursor(params.get('next_cursor'));
  if (offset === null) return json(400, { error: 'invalid next_cursor' });
  if (offset < 0 || offset >= items.length) {
    return { limit: pageSize, count: 0, next_cursor: END_CURSOR, data: [] };
  }
  const data = items.slice(offset, offset + pageSize);
  const next = offset + data.length;
  return { limit: pageSize, count: data.length, next_cursor: next < items.length ? encode(next) : END_CURSOR, data };
}

export const isPage = <T>(p: Page<T> | SimResponse): p is Page<T> => 'next_cursor' in p;
