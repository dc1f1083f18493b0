// https://forecastex.com (site API behind the contract listings; upstreams.md §7, not checked against the site)
import { formatScaled } from '../../core/decimal';
import type { SimHost } from '../platform';
import { Router } from '../../http/router';
import { json, type PlatformErrors } from '../../http/types';
import { intParam } from '../context';
import type { IbkrCatalog } from './catalog';

/** [U] every shape here: only the query parameters are documented (Graylayer's forecastex page). */
const forecastexErrors: PlatformErrors = {
  notFound: () => json(404, { error: 'Not Found' }),
  unauthorized: () => json(401, { error: 'Unauthorized' }),
  rateLimited: () => json(429, { error: 'Too Many Requests' }),
  serverError: (status) => json(status, { error: 'Internal Server Error' }),
};

export function forecastexHost(catalog: IbkrCatalog): SimHost {
  const r = new Router('/api');
  r.get('/contracts', (req) => {
    const page = intParam(req.params, 'page');
    const pageSize = intParam(req.params, 'pageSize');
    if (page === null || (page !== undefined && page < 1))
      return json(400, { error: 'page must be a positive integer' });
    if (pageSize === null || (pageSize !== undefined && (pageSize < 1 || pageSize > 500))) {
      return json(400, { error: 'pageSize must be between 1 and 500' });
    }
    const sortBy = req.params.get('sortBy') ?? 'volume';
    if (sortBy !== 'volume' && sortBy !== 'open_interest')
      return json(400, { error: 'sortBy must be volume or open_interest' });
    const sortOrder = req.params.get('sortOrder') ?? 'desc';
    if (sortOrder !== 'asc' && sortOrder !== 'desc') return json(400, { error: 'sortOrder must be asc or desc' });
    const key = sortBy === 'volume' ? 'volume' : 'openInterest';
    const sign = sortOrder === 'asc' ? 1 : -1;
    const list = [...catalog.contracts].sort((a, b) => sign * (a[key] - b[key]) || a.conid - b.conid);
    const p = page ?? 1;
    const n = pageSize ?? 20;
    return json(200, {
      page: p,
      pageSize: n,
      total: list.length,
      contracts: list.slice((p - 1) * n, p * n).map((c) => ({
        conid: c.conid,
        underlyingConid: c.market.conid,
        symbol: c.market.symbol,
        name: c.market.name,
        side: c.right === 'C' ? 'YES' : 'NO',
        strike: c.strike,
        expiration: c.maturityDate,
        bid: formatScaled(c.bid, 2),
        ask: formatScaled(c.ask, 2),
        volume: c.volume,
        open_interest: c.openInterest,
      })),
    });
  });
  return { router: r, errors: forecastexErrors };
}
