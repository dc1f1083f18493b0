import { startSimulator, type Simulator } from './index';
import { get, httpsGet } from './testing/clients';

describe('IBKR Client Portal over HTTPS with an idle-expiring session', () => {
  let sim: Simulator;
  let now = 1_780_000_000_000;
  beforeAll(async () => {
    sim = await startSimulator({
      seed: 1,
      updatesPerSecond: 0,
      ibkrIdleTimeoutMs: 60_000,
      clock: () => now,
      rateLimits: false,
    });
  });
  afterAll(() => sim.stop());
  const call = (path: string) => httpsGet(`${sim.urls['venue-e/portal']}${path}`, sim.credentials.ibkr.certPem);

  test('serves HTTPS only, with a certificate clients can pin', async () => {
    expect(sim.urls['venue-e/portal']).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/v1\/api$/);
    const plain = await get(sim.urls['venue-e/portal'].replace('https:', 'http:') + '/tickle').catch(
      (e: unknown) => e as Error,
    );
    expect('status' in plain ? plain.status : 'refused').not.toBe(200);
    const res = await call('/iserver/auth/status');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toMatchObject({ authenticated: true, connected: true });
  });

  test('/tickle keeps the session alive; without it, it expires and every call answers 401', async () => {
    sim.ibkr.login();
    for (let i = 0; i < 5; i++) {
      now += 50_000; // less than the idle timeout each time
      const t = await call('/tickle');
      expect(t.status).toBe(200);
      expect(JSON.parse(t.text)).toMatchObject({ iserver: { authStatus: { authenticated: true } } });
    }
    // Other calls do not count as activity (only /tickle does, by default).
    now += 40_000;
    expect((await call('/trsrv/event/category-tree')).status).toBe(200);
    now += 30_000;
    const expired = await call('/trsrv/event/category-tree');
    expect(expired).toEqual({ status: 401, text: 'Access Denied' });
    expect((await call('/tickle')).status).toBe(401);
    expect(sim.ibkr.isAuthenticated()).toBe(false);
    expect(sim.requests({ platform: 'ibkr' }).at(-1)).toMatchObject({
      auth: 'invalid',
      status: 401,
      authError: expect.stringMatching(/session/),
    });
    const login = await get(`${sim.urls.control}/control/ibkr/login`, {}, { method: 'POST' });
    expect(login.json).toEqual({ authenticated: true });
    expect((await call('/tickle')).status).toBe(200);
  });

  test('expireSession() ends it at once', async () => {
    sim.ibkr.login();
    sim.ibkr.expireSession();
    expect((await call('/iserver/secdef/search?symbol=USIP')).status).toBe(401);
    sim.ibkr.login();
  });

  test('event contracts: category tree keyed by id with markets at the leaves, secdef and forecast endpoints', async () => {
    const tree = JSON.parse((await call('/trsrv/event/category-tree')).text) as Record<
      string,
      { label: string; parentId?: string; markets: Array<{ conid: number; exchange: string; symbol: string }> }
    >;
    expect(tree.g1003).toEqual({ label: 'Economic Indicators', markets: [] });
    expect(tree.g17654).toMatchObject({ parentId: 'g17574', markets: [{ symbol: 'USIP', exchange: 'FORECASTX' }] });
    const leaf = tree.g17654?.markets[0] as { conid: number };
    const search = JSON.parse((await call('/iserver/secdef/search?symbol=USIP')).text) as Array<{
      conid: number;
      opt: string;
    }>;
    expect(search[0]?.conid).toBe(leaf.conid);
    const month = search[0]?.opt.split(';')[0] as string;
    const strikes = JSON.parse(
      (await call(`/iserver/secdef/strikes?conid=${leaf.conid}&sectype=OPT&month=${month}`)).text,
    ) as { call: number[] };
    expect(strikes.call.length).toBeGreaterThan(0);
    const info = JSON.parse(
      (
        await call(
          `/iserver/secdef/info?conid=${leaf.conid}&sectype=OPT&month=${month}&strike=${strikes.call[0]}&right=C`,
        )
      ).text,
    ) as Array<{ conid: number; exchange: string }>;
    expect(info[0]).toMatchObject({ exchange: 'FORECASTX' });
    const conid = info[0]?.conid as number;
    for (const what of ['details', 'market', 'rules', 'schedules']) {
      const r = await call(`/forecast/contract/${what}?conid=${conid}`);
      expect(r.status).toBe(200);
      expect(JSON.parse(r.text)).toMatchObject({ conid });
    }
    expect(JSON.parse((await call('/forecast/category/tree')).text)).toEqual(tree);
    expect((await call('/forecast/contract/market?conid=1')).status).toBe(400);
  });
});
