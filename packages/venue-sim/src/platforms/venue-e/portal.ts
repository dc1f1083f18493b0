// https://www.interactivebrokers.com/campus/ibkr-api-page/cpapi-v1/ (Client Portal Web API v1.0)
import { formatScaled } from '../../core/decimal';
import type { SimHost } from '../platform';
import { Router } from '../../http/router';
import { json, type PlatformErrors, type SimRequest, text } from '../../http/types';
import type { PlatformContext } from '../context';
import type { ForecastContract, IbkrCatalog } from './catalog';
import type { IbkrSession } from './session';

export const IBKR_PREFIX = '/v1/api';

/** [U] the portal's error bodies beyond the session 401 are not documented. */
const ibkrErrors = (unauthorizedBody: string): PlatformErrors => ({
  notFound: () => text(404, 'Not Found'),
  unauthorized: () => text(401, unauthorizedBody),
  rateLimited: () => text(429, 'Too Many Requests'),
  serverError: (status) => json(status, { error: 'Internal Server Error', statusCode: status }),
});

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const monthCode = (maturity: string) => `${MONTHS[Number(maturity.slice(4, 6)) - 1]}${maturity.slice(2, 4)}`;

export function ibkrHost(ctx: PlatformContext, catalog: IbkrCatalog, session: IbkrSession): SimHost {
  const { opts, keys } = ctx;
  const r = new Router(IBKR_PREFIX);
  const errors = ibkrErrors(opts.assumptions.ibkrUnauthorizedBody);

  const authStatus = () => ({
    authenticated: session.isAuthenticated(),
    competing: false,
    connected: true,
    message: '',
    MAC: '98:F2:B3:23:BF:A0',
    serverInfo: { serverName: 'JifN19053', serverVersion: 'Build 10.25.0p, Dec 5, 2023 5:48:12 PM' },
    fail: '',
  });
  const tickle = () =>
    json(200, {
      session: session.sessionId,
      ssoExpires: session.remainingMs(),
      collission: false,
      userId: 12345678,
      hmds: { error: 'no bridge' },
      iserver: { authStatus: authStatus() },
    });
  r.get('/tickle', tickle);
  r.post('/tickle', tickle);
  r.get('/iserver/auth/status', () => json(200, authStatus()));
  r.post('/iserver/auth/status', () => json(200, authStatus()));
  r.post('/iserver/reauthenticate', () => json(200, { message: 'triggered' }));
  r.post('/logout', () => {
    session.expire();
    return json(200, { status: true });
  });

  r.get('/trsrv/event/category-tree', () => json(200, catalog.tree));
  r.get('/forecast/category/tree', () => json(200, catalog.tree));

  const contractByConid = (req: SimRequest): ForecastContract | undefined => {
    const conid = Number(req.params.get('conid'));
    return catalog.contracts.find((c) => c.conid === conid);
  };
  const missingConid = () => json(400, { error: 'conid is required and must identify a FORECASTX contract' });

  r.get('/iserver/secdef/search', (req) => {
    const symbol = (req.params.get('symbol') ?? '').toUpperCase();
    if (!symbol) return json(400, { error: 'symbol is required' });
    return json(
      200,
      catalog.markets
        .filter((m) => m.symbol.startsWith(symbol) || m.name.toUpperCase().includes(symbol))
        .map((m) => {
          const months = [
            ...new Set(catalog.contracts.filter((c) => c.market === m).map((c) => monthCode(c.maturityDate))),
          ];
          return {
            conid: m.conid,
            companyHeader: `${m.name} - FORECASTX`,
            companyName: m.name,
            symbol: m.symbol,
            description: 'FORECASTX',
            restricted: null,
            fop: null,
            opt: months.join(';'),
            war: null,
            sections: [
              { secType: 'IND', exchange: 'FORECASTX;' },
              { secType: 'OPT', months: months.join(';'), exchange: 'FORECASTX' },
            ],
          };
        }),
    );
  });
  r.get('/iserver/secdef/strikes', (req) => {
    const conid = Number(req.params.get('conid'));
    const month = (req.params.get('month') ?? '').toUpperCase();
    const list = catalog.contracts.filter(
      (c) => c.market.conid === conid && (!month || monthCode(c.maturityDate) === month),
    );
    if (list.length === 0) return json(400, { error: 'no strikes for conid/month' });
    const strikes = (right: 'C' | 'P') => [
      ...new Set(list.filter((c) => c.right === right).map((c) => Number(c.strike))),
    ];
    return json(200, { call: strikes('C'), put: strikes('P') });
  });
  r.get('/iserver/secdef/info', (req) => {
    const conid = Number(req.params.get('conid'));
    const month = (req.params.get('month') ?? '').toUpperCase();
    const strike = req.params.get('strike');
    const right = req.params.get('right');
    const list = catalog.contracts.filter(
      (c) =>
        (c.market.conid === conid || c.conid === conid) &&
        (!month || monthCode(c.maturityDate) === month) &&
        (strike === null || Number(c.strike) === Number(strike)) &&
        (right === null || c.right === right),
    );
    return json(
      200,
      list.map((c) => ({
        conid: c.conid,
        symbol: c.market.symbol,
        secType: 'OPT',
        exchange: 'FORECASTX',
        listingExchange: 'FORECASTX',
        right: c.right,
        strike: Number(c.strike),
        currency: 'USD',
        cusip: null,
        coupon: 'No Coupon',
        desc1: c.market.symbol,
        desc2: `${monthCode(c.maturityDate)} ${c.strike} ${c.right === 'C' ? 'Call' : 'Put'} (${c.right === 'C' ? 'YES' : 'NO'})`,
        maturityDate: c.maturityDate,
        multiplier: '1',
        tradingClass: c.market.symbol,
        validExchanges: 'FORECASTX',
      })),
    );
  });
  // [U] The /forecast/contract/* shapes are not documented publicly; these carry the obvious fields.
  r.get('/forecast/contract/details', (req) => {
    const c = contractByConid(req);
    if (!c) return missingConid();
    return json(200, {
      conid: c.conid,
      underlying_conid: c.market.conid,
      symbol: c.market.symbol,
      question: `Will ${c.market.name} be above ${c.strike} on ${c.maturityDate}?`,
      side: c.right === 'C' ? 'YES' : 'NO',
      strike: c.strike,
      expiration: c.maturityDate,
      exchange: 'FORECASTX',
      payout: '1.00',
      category_id: c.market.categoryId,
    });
  });
  r.get('/forecast/contract/market', (req) => {
    const c = contractByConid(req);
    if (!c) return missingConid();
    const cents = (v: number) => formatScaled(v, 2);
    return json(200, {
      conid: c.conid,
      bid: cents(c.bid),
      ask: cents(c.ask),
      last: cents(c.bid),
      volume: c.volume,
      open_interest: c.openInterest,
    });
  });
  r.get('/forecast/contract/rules', (req) => {
    const c = contractByConid(req);
    if (!c) return missingConid();
    return json(200, {
      conid: c.conid,
      rules: `The contract pays $1 if the published value of ${c.market.name} is above ${c.strike} (YES), otherwise the NO contract pays $1.`,
      source_agency:
        c.market.symbol === 'FF' ? 'Federal Reserve' : c.market.symbol === 'USIP' ? 'Federal Reserve Board' : 'NOAA',
    });
  });
  r.get('/forecast/contract/schedules', (req) => {
    const c = contractByConid(req);
    if (!c) return missingConid();
    return json(200, {
      conid: c.conid,
      timezone: 'US/Central',
      trading_schedules: [{ day_of_week: 'Mon-Fri', trading_times: [{ open: '08:00', close: '17:00' }] }],
      last_trading_date: c.maturityDate,
    });
  });

  return {
    router: r,
    errors,
    tls: keys.ibkrTls,
    gate: (req) => {
      if (!session.isAuthenticated()) {
        req.record.auth = 'invalid';
        req.record.authError = 'session expired or not logged in';
        return errors.unauthorized('session');
      }
      req.record.auth = 'valid';
      if (opts.assumptions.ibkrAnyRequestKeepsAlive || req.path === `${IBKR_PREFIX}/tickle`) session.touch();
      return undefined;
    },
  };
}
