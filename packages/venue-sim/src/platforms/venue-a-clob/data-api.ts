// https://docs.polymarket.com/api-reference/core/get-top-holders-for-markets (Data API)
import { scaledNumber } from '../../core/decimal';
import { Rng } from '../../core/rng';
import type { SimHost } from '../platform';
import { Router } from '../../http/router';
import { json, type PlatformErrors } from '../../http/types';
import type { PlatformContext } from '../context';
import { type PolymarketCatalog, polymarketImage } from '../venue-a/catalog';
import { tradeTape } from './trades';

/** `{"error": ...}` bodies [3P] (captured 400s). */
const dataErrors: PlatformErrors = {
  notFound: () => json(404, { error: 'not found' }),
  unauthorized: () => json(401, { error: 'unauthorized' }),
  rateLimited: () => json(429, { error: 'Too Many Requests' }),
  serverError: (status) => json(status, { error: 'internal error' }),
};

const required = (name: string) => json(400, { error: `required query param '${name}' not provided` });

export function dataHost(ctx: PlatformContext, catalog: PolymarketCatalog): SimHost {
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
  // The same tape the CLOB's live activity shows, newest first across the requested markets (all without one).
  r.get('/trades', (req) => {
    const wanted = (req.params.get('market') ?? '').split(',').filter(Boolean);
    const list = wanted.length ? wanted.flatMap((c) => byCondition.get(c) ?? []) : catalog.markets;
    const limit = Math.min(500, Math.max(1, Number(req.params.get('limit') ?? 100) || 100));
    const now = Math.floor(ctx.clock() / 1000);
    const trades = list
      .flatMap((m) => tradeTape(opts.seed, catalog, m, now, limit).map((t) => ({ m, t })))
      .sort((a, b) => b.t.timestamp - a.t.timestamp)
      .slice(0, limit);
    return json(
      200,
      trades.map(({ m, t }) => ({
        proxyWallet: t.wallet,
        side: t.side,
        asset: t.asset,
        conditionId: m.conditionId,
        size: t.size,
        price: scaledNumber(t.cents, 2),
        timestamp: t.timestamp,
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
