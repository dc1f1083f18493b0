import { otherCredentials } from './testing/credentials';
import { signers, startSimulator, type Simulator } from './index';
import { get } from './testing/clients';

describe('private routes answer 401 in the platform format unless the request is signed as the platform signs', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 2, updatesPerSecond: 0, rateLimits: false });
  });
  afterAll(() => sim.stop());
  beforeEach(() => sim.clearRequests());
  const last = () => sim.requests().at(-1);

  test('Kalshi portfolio: signed → 200, unsigned → 401 absent, wrong key / tampered path → 401 invalid', async () => {
    const path = '/trade-api/v2/portfolio/positions';
    const ok = await get(
      `${sim.urls['venue-b']}/portfolio/positions?limit=5`,
      signers.kalshiHeaders(sim.credentials.kalshi, 'GET', path),
    );
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ market_positions: expect.any(Array), event_positions: expect.any(Array) });
    expect(last()).toMatchObject({ auth: 'valid', status: 200, query: 'limit=5' });
    const none = await get(`${sim.urls['venue-b']}/portfolio/positions`);
    expect(none.status).toBe(401);
    expect(none.json).toMatchObject({ error: { code: 'authentication_error' } });
    expect(last()).toMatchObject({ auth: 'absent', status: 401 });
    const other = (await otherCredentials()).credentials.kalshi;
    const wrong = await get(
      `${sim.urls['venue-b']}/portfolio/positions`,
      signers.kalshiHeaders({ ...other, accessKey: sim.credentials.kalshi.accessKey }, 'GET', path),
    );
    expect(wrong.status).toBe(401);
    expect(last()).toMatchObject({ auth: 'invalid', authError: expect.stringMatching(/does not verify/) });
    const tampered = await get(
      `${sim.urls['venue-b']}/portfolio/orders`,
      signers.kalshiHeaders(sim.credentials.kalshi, 'GET', path),
    );
    expect(tampered.status).toBe(401);
    expect(
      (
        await get(
          `${sim.urls['venue-b']}/portfolio/balance`,
          signers.kalshiHeaders(sim.credentials.kalshi, 'GET', '/trade-api/v2/portfolio/balance'),
        )
      ).json,
    ).toMatchObject({
      balance: expect.any(Number),
    });
  });

  test('Kalshi public routes: signing is verified and recorded; a bad signature is refused', async () => {
    const path = '/trade-api/v2/markets';
    expect(
      (await get(`${sim.urls['venue-b']}/markets`, signers.kalshiHeaders(sim.credentials.kalshi, 'GET', path))).status,
    ).toBe(200);
    expect(last()).toMatchObject({ auth: 'valid' });
    expect((await get(`${sim.urls['venue-b']}/markets`)).status).toBe(200);
    expect(last()).toMatchObject({ auth: 'not_required' });
    const stale = signers.kalshiHeaders(sim.credentials.kalshi, 'GET', path, Date.now() - 60_000);
    expect((await get(`${sim.urls['venue-b']}/markets`, stale)).status).toBe(401);
    expect(last()).toMatchObject({ auth: 'invalid', authError: expect.stringMatching(/stale/) });
  });

  test('Polymarket US auth host: Ed25519 headers over the path', async () => {
    const path = '/v1/portfolio/positions';
    const ok = await get(
      `${sim.urls['venue-a-us/auth']}${path}`,
      signers.polymarketUsHeaders(sim.credentials.polymarketUs, 'GET', path),
    );
    expect(ok.status).toBe(200);
    expect(last()).toMatchObject({ platform: 'venue-a-us/auth', auth: 'valid' });
    const none = await get(`${sim.urls['venue-a-us/auth']}${path}`);
    expect([none.status, none.json]).toEqual([401, { code: 16, message: 'Unauthorized', details: [] }]);
    const tampered = await get(
      `${sim.urls['venue-a-us/auth']}/v1/portfolio/activities`,
      signers.polymarketUsHeaders(sim.credentials.polymarketUs, 'GET', path),
    );
    expect(tampered.status).toBe(401);
    expect(last()?.authError).toMatch(/does not verify/);
  });

  test('CLOB L2: /data/orders and /data/trades', async () => {
    const ok = await get(
      `${sim.urls['venue-a-clob']}/data/orders?market=0xabc`,
      signers.clobHeaders(sim.credentials.polymarketClob, 'GET', '/data/orders'),
    );
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ data: [], next_cursor: 'LTE=' });
    const none = await get(`${sim.urls['venue-a-clob']}/data/trades`);
    expect([none.status, none.json]).toEqual([401, { error: 'Unauthorized/Invalid api key' }]);
    const stale = signers.clobHeaders(
      sim.credentials.polymarketClob,
      'GET',
      '/data/trades',
      '',
      Math.floor(Date.now() / 1000) - 120,
    );
    expect((await get(`${sim.urls['venue-a-clob']}/data/trades`, stale)).status).toBe(401);
    expect(last()?.authError).toMatch(/stale/);
  });

  test('Coinbase: HMAC over the path with its query, or an ES256 JWT; Coinbase error messages', async () => {
    const ok = await get(
      `${sim.urls['venue-d']}/fills?product_id=BTC-USD`,
      signers.coinbaseHeaders(sim.credentials.coinbase, 'GET', '/fills?product_id=BTC-USD'),
    );
    expect(ok.status).toBe(200);
    const accounts = await get(
      `${sim.urls['venue-d']}/accounts`,
      signers.coinbaseHeaders(sim.credentials.coinbase, 'GET', '/accounts'),
    );
    expect(accounts.json).toEqual(expect.arrayContaining([expect.objectContaining({ currency: 'USD' })]));
    const none = await get(`${sim.urls['venue-d']}/accounts`);
    expect(none.status).toBe(401);
    const wrong = await get(
      `${sim.urls['venue-d']}/orders`,
      signers.coinbaseHeaders(sim.credentials.coinbase, 'GET', '/accounts'),
    );
    expect([wrong.status, wrong.json]).toEqual([401, { message: 'invalid signature' }]);
    const host = new URL(sim.urls['venue-d']).host;
    const jwt = signers.coinbaseJwt(sim.credentials.coinbaseJwt, 'GET', `${host}/accounts`);
    expect((await get(`${sim.urls['venue-d']}/accounts`, { authorization: `Bearer ${jwt}` })).status).toBe(200);
    expect(last()).toMatchObject({ auth: 'valid' });
    expect((await get(`${sim.urls['venue-d']}/orders`, { authorization: `Bearer ${jwt}` })).status).toBe(401);
  });

  test('Gemini and Gamma public GETs need nothing', async () => {
    expect((await get(`${sim.urls['venue-c']}/v1/prediction-markets/events`)).status).toBe(200);
    expect((await get(`${sim.urls['venue-a']}/events`)).status).toBe(200);
    expect(sim.requests().map((r) => r.auth)).toEqual(['not_required', 'not_required']);
  });
});

describe('auth switches for [3P]/[U] behaviours', () => {
  test('kalshiOrderbookRequiresAuth, polymarketUsTeamsRequiresAuth and serving public routes despite bad credentials', async () => {
    const sim = await startSimulator({
      updatesPerSecond: 0,
      kalshiOrderbookRequiresAuth: true,
      assumptions: { polymarketUsTeamsRequiresAuth: true, rejectInvalidAuthOnPublicRoutes: false },
    });
    try {
      const ticker = sim.books.tickers('kalshi')[0] as string;
      const path = `/trade-api/v2/markets/${ticker}/orderbook`;
      expect((await get(`${sim.urls['venue-b']}/markets/${ticker}/orderbook`)).status).toBe(401);
      expect(
        (
          await get(
            `${sim.urls['venue-b']}/markets/${ticker}/orderbook`,
            signers.kalshiHeaders(sim.credentials.kalshi, 'GET', path),
          )
        ).status,
      ).toBe(200);
      expect((await get(`${sim.urls['venue-a-us']}/v1/sports/teams`)).status).toBe(401);
      const bad = signers.kalshiHeaders(sim.credentials.kalshi, 'GET', '/trade-api/v2/elsewhere');
      expect((await get(`${sim.urls['venue-b']}/markets`, bad)).status).toBe(200);
      expect(sim.requests().at(-1)).toMatchObject({ auth: 'invalid', status: 200 });
    } finally {
      await sim.stop();
    }
  });
});
