// https://docs.polymarket.com/api-reference/core/get-top-holders-for-markets (Data API)
import { parseScaled, scaledNumber } from '../../core/decimal';
import { Rng } from '../../core/rng';
import type { SimHost } from '../platform';
import { Router } from '../../http/router';
import { json, type PlatformErrors } from '../../http/types';
import type { PlatformContext } from '../context';
import { type PolymarketCatalog, polymarketImage } from '../venue-a/catalog';
import type { ClobTrades, TapeTrade } from './trades';

/** `{"error": ...}` bodies [3P] (captured 400s). */
const dataErrors: PlatformErrors = {
  notFound: () => json(404, { error: 'not found' }),
  unauthorized: () => json(401, { error: 'unauthorized' }),
  rateLimited: () => json(429, { error: 'Too Many Requests' }),
  serverError: (status) => json(status, { error: 'internal error' }),
};

const required = (name: string) => json(400, { error: `required query param '${name}' not provided` });

/** Data API `/trades` bounds [V]: `limit` 0–10 000 (larger values clamped), `offset` 0–10 000 (larger: 400). */
const MAX_TRADES_LIMIT = 10_000;
const MAX_TRADES_OFFSET = 10_000;

export function dataHost(ctx: PlatformContext, catalog: PolymarketCatalog, trades: ClobTrades): SimHost {
  const { opts } = ctx;
  const r = new Router();
  const byCondition = new Map(catalog.markets.map((m) => [m.conditionId, m]));
  const profiles = [...catalog.profiles.entries()];

  r.get('/', () => json(200, { data: 'OK' }));
  r.get('/oi', (req) => {
    const markets = (req.params.get('market') ?? '').split(',').filter(Boolean);
    if (markets.length === 0) return required('market');
    return json(
      200,
      markets
        .filter((c) => byCondition.has(c))
        .map((c) => ({
          market: c,
          value: scaledNumber(Math.round((byCondition.get(c)?.liquidityCents ?? 0) / 37), 2),
        })),
    );
  });
  r.get('/holders', (req) => {
    const c = req.params.get('market');
    if (!c) return required('market');
    const m = byCondition.get(c);
    if (!m) return json(200, []);
    const limit = Math.min(20, Math.max(1, Number(req.params.get('limit') ?? 20) || 20));
    return json(
      200,
      m.tokens.map((token, outcomeIndex) => {
        const rng = new Rng(opts.seed, 'data', 'holders', token);
        return {
          token,
          holders: profiles.slice(0, limit).map(([address, pseudonym]) => ({
            proxyWallet: address,
            bio: '',
            asset: token,
            pseudonym,
            amount: scaledNumber(rng.range(1_000, 20_000_000) * 1_000_000 + rng.range(0, 999_999), 6),
            displayUsernamePublic: true,
            outcomeIndex,
            name: pseudonym.toLowerCase(),
            profileImage: '',
          })),
        };
      }),
    );
  });
  r.get('/live-volume', (req) => {
    const id = req.params.get('id');
    if (!id) return required('id');
    const e = catalog.events.find((x) => x.id === id);
    if (!e) return json(200, [{ total: 0, markets: [] }]);
    return json(200, [
      {
        total: scaledNumber(Math.floor(e.volumeCents / 30), 2),
        markets: e.markets.map((m) => ({
          market: m.conditionId,
          value: scaledNumber(Math.floor(m.volumeCents / 30), 2),
        })),
      },
    ]);
  });
  r.get('/positions', (req) => {
    const user = req.params.get('user');
    if (!user) return required('user');
    if (!/^0x[0-9a-fA-F]{40}$/.test(user)) return json(400, { error: 'invalid user address' });
    const known = catalog.profiles.has(user.toLowerCase());
    const m = catalog.markets[0];
    if (!known || !m) return json(200, []);
    return json(200, [
      {
        proxyWallet: user.toLowerCase(),
        asset: m.tokens[0],
        conditionId: m.conditionId,
        size: 1250.5,
        avgPrice: scaledNumber(m.cents, 2),
        initialValue: scaledNumber(12_505 * m.cents, 3),
        currentValue: scaledNumber(12_505 * m.cents, 3),
        cashPnl: 0,
        percentPnl: 0,
        curPrice: scaledNumber(m.cents, 2),
        redeemable: false,
        title: m.question,
        slug: m.slug,
        outcome: 'Yes',
        outcomeIndex: 0,
        endDate: m.endDate,
      },
    ]);
  });
  /**
   * `/trades` [V]: the markets' trades newest first (the moving books' own, as far back as the simulator retains
   * them), filtered by `market` (condition ids, comma-separated) or `eventId` (comma-separated, not both), `user`
   * (the taker), `side` (the taker's), `start`/`end` (Unix seconds, inclusive), `filterType` CASH|TOKENS with
   * `filterAmount` (at least that much notional or that many shares); paged by `limit` (default 100) and `offset`.
   * Every trade is reported from the taker's side, so `takerOnly=false` lists the same ones ([U]: maker records).
   */
  r.get('/trades', (req) => {
    const p = req.params;
    const bad = (message: string) => json(400, { error: message });
    const int = (name: string) => {
      const v = p.get(name);
      return v === null || v === '' ? undefined : /^\d+$/.test(v) ? Number(v) : null;
    };
    const limit = int('limit');
    const offset = int('offset');
    const start = int('start');
    const end = int('end');
    if (limit === null) return bad('limit must be a non-negative integer');
    if (offset === null || (offset ?? 0) > MAX_TRADES_OFFSET) return bad(`offset must be 0 to ${MAX_TRADES_OFFSET}`);
    if (start === null || end === null) return bad('start and end must be Unix seconds');
    const takerOnly = p.get('takerOnly');
    if (takerOnly !== null && takerOnly !== 'true' && takerOnly !== 'false') return bad('takerOnly must be a boolean');
    const side = p.get('side');
    if (side !== null && side !== 'BUY' && side !== 'SELL') return bad('side must be BUY or SELL');
    const user = p.get('user');
    if (user !== null && !/^0x[0-9a-fA-F]{40}$/.test(user)) return bad('invalid user address');
    const filterType = p.get('filterType');
    const filterAmount = p.get('filterAmount');
    if ((filterType === null) !== (filterAmount === null)) return bad('filterType and filterAmount go together');
    if (filterType !== null && filterType !== 'CASH' && filterType !== 'TOKENS')
      return bad('filterType must be CASH or TOKENS');
    // Thresholds in the trade's own units: hundredths of a share, and of a share times cents for cash.
    const amount = filterAmount === null ? undefined : parseScaled(filterAmount, 2);
    if (amount === null) return bad('filterAmount must be a non-negative decimal (two places at most)');
    const marketIds = (p.get('market') ?? '').split(',').filter(Boolean);
    const eventIds = (p.get('eventId') ?? '').split(',').filter(Boolean);
    if (marketIds.length && eventIds.length) return bad('market and eventId cannot be used together');
    if (!eventIds.every((e) => /^\d+$/.test(e))) return bad('eventId must be integers, comma-separated');
    const list = marketIds.length
      ? marketIds.flatMap((c) => byCondition.get(c) ?? [])
      : eventIds.length
        ? catalog.markets.filter((m) => eventIds.includes(m.eventId))
        : catalog.markets;
    const keep = (t: TapeTrade) =>
      (side === null || t.side === side) &&
      (user === null || t.wallet === user.toLowerCase()) &&
      (start === undefined || t.ts >= start * 1000) &&
      (end === undefined || t.ts < (end + 1) * 1000) &&
      (amount === undefined || (filterType === 'TOKENS' ? t.size >= amount : t.size * t.cents >= amount * 100));
    const n = Math.min(limit ?? 100, MAX_TRADES_LIMIT);
    const o = offset ?? 0;
    const now = ctx.clock();
    const page = list
      .flatMap((m) => trades.marketTrades(m, now, o + n, keep).map((t) => ({ m, t })))
      .sort((a, b) => b.t.ts - a.t.ts)
      .slice(o, o + n);
    return json(
      200,
      page.map(({ m, t }) => ({
        proxyWallet: t.wallet,
        side: t.side,
        asset: t.asset,
        conditionId: m.conditionId,
        size: scaledNumber(t.size, 2),
        price: scaledNumber(t.cents, 2),
        timestamp: Math.floor(t.ts / 1000),
        title: m.question,
        slug: m.slug,
        icon: polymarketImage(m.slug),
        eventSlug: m.eventSlug,
        outcome: t.outcomeIndex === 0 ? 'Yes' : 'No',
        outcomeIndex: t.outcomeIndex,
        name: t.pseudonym.toLowerCase(),
        pseudonym: t.pseudonym,
        bio: '',
        profileImage: '',
        profileImageOptimized: '',
        transactionHash: t.transactionHash,
      })),
    );
  });
  r.get('/value', (req) => {
    const user = req.params.get('user');
    if (!user) return required('user');
    return json(200, [{ user: user.toLowerCase(), value: catalog.profiles.has(user.toLowerCase()) ? 1250.5 : 0 }]);
  });

  return { router: r, errors: dataErrors };
}
