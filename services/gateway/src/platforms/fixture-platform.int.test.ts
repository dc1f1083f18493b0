/**
 * docs/ADD_NEW_PLATFORM.md, proven: a platform defined only by the three steps it lists — a descriptor (with its
 * signer), the gateway's route module, the simulator's module — is configured from the environment, routed by the
 * gateway, signed, served and verified by the simulator, and appears in every derived list (environment variables,
 * budgets, OpenAPI, aliases, the simulator's hosts and env file).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { RedisKeyStore, createRedisClient, waitForRedis, type Redis } from '@depthgate/auth';
import {
  credential,
  definePlatform,
  PLATFORMS,
  platformEnvNames,
  ALL_PARTS,
  type SignInput,
  type SyncSigner,
} from '@depthgate/platforms';
import { createLogger } from '@depthgate/service-kit';
import { testRedisUrl, uniqueName } from '@depthgate/test-utils';
import { envNames, header, json, Router, simPlatform, startSimulator, type Simulator } from '@depthgate/venue-sim';
import { gatewayEnvNames, loadConfig } from '../config';
import { openApiDocument } from '../openapi';
import { startGateway, type RunningGateway } from '../server';
import { ROUTES } from './registry';
import type { RouteModule } from './types';

// Step 1: the descriptor, with its signer (HMAC-SHA256 over timestamp + METHOD + path).
const fixtureSign = (secret: string, ts: string, method: string, path: string) =>
  createHmac('sha256', secret).update(`${ts}${method}${path}`).digest('hex');

const venueF = definePlatform({
  key: 'venue-f',
  title: 'Fixture Exchange',
  covers: 'Things',
  docs: 'https://docs.fixture.example',
  aliases: ['fixture'],
  hosts: { main: { env: 'UPSTREAM_VENUE_F_URL', default: 'https://api.fixture.example', description: 'Fixture' } },
  budget: { perSecond: 4, burst: 2, source: 'fixture: 4 per second' },
  credentials: {
    hmac: credential<{ key: string; secret: string }>({
      name: 'Fixture',
      vars: [
        { env: 'FIXTURE_API_KEY', description: 'key' },
        { env: 'FIXTURE_API_SECRET', secret: true, description: 'secret' },
      ],
      build: (v) => ({ key: v.FIXTURE_API_KEY ?? '', secret: v.FIXTURE_API_SECRET ?? '' }),
    }),
  },
  settings: {},
  signer: (c): SyncSigner | undefined => {
    const creds = c.hmac;
    if (!creds) return undefined;
    return {
      name: 'fixture-hmac',
      headerNames: ['x-fix-key', 'x-fix-ts', 'x-fix-sign'],
      sign: (input: SignInput, nowMs: number) => ({
        'X-Fix-Key': creds.key,
        'X-Fix-Ts': String(nowMs),
        'X-Fix-Sign': fixtureSign(creds.secret, String(nowMs), input.method, input.path),
      }),
    };
  },
});
const registry = { ...PLATFORMS, 'venue-f': venueF };

// Step 2: the gateway's route module (resources live under /v9 upstream; everything signed).
const venueFRoutes: RouteModule<typeof venueF> = (ctx) => {
  const target = ctx.target('main', { signer: ctx.platform.signer });
  return {
    targets: [target],
    route: (resource, query) => ({ target, path: `/v9${resource.path}`, query, sign: true }),
  };
};

// Step 3: the simulator's module: one host, its credentials, its verification.
const secret = randomBytes(16).toString('hex');
const venueFSim = simPlatform({
  signs: ['hmac'],
  rateLimits: { main: null },
  create: () => {
    const router = new Router();
    router.get('/v9/things', () => json(200, { things: ['a', 'b'] }), 'required');
    return {
      hosts: {
        main: {
          router,
          errors: {
            notFound: () => json(404, { message: 'no such thing' }),
            unauthorized: (reason) => json(401, { message: reason }),
            rateLimited: () => json(429, { message: 'slow down' }),
            serverError: (status) => json(status, { message: 'broken' }),
          },
          verify: (input) => {
            const [key, ts, sign] = ['x-fix-key', 'x-fix-ts', 'x-fix-sign'].map((h) => header(input, h));
            if (key === undefined && sign === undefined) return { state: 'absent' };
            if (key !== 'fixture-key' || !ts || !sign) return { state: 'invalid', error: 'bad key' };
            const expected = Buffer.from(fixtureSign(secret, ts, input.method, input.path));
            const given = Buffer.from(sign);
            return given.length === expected.length && timingSafeEqual(given, expected)
              ? { state: 'valid' }
              : { state: 'invalid', error: 'bad signature' };
          },
        },
      },
      credentials: { FIXTURE_API_KEY: 'fixture-key', FIXTURE_API_SECRET: secret },
    };
  },
});

let sim: Simulator;
let admin: Redis;
let gw: RunningGateway;
let apiKey: string;
const prefix = `${uniqueName('gwfix')}:`;

beforeAll(async () => {
  sim = await startSimulator({
    seed: 3,
    updatesPerSecond: 0,
    rateLimits: false,
    extraPlatforms: { 'venue-f': { descriptor: venueF, sim: venueFSim } },
  });
  admin = createRedisClient(testRedisUrl(), { name: 'gw-fixture-admin', offlineQueue: true });
  await waitForRedis(admin, 5000);
  apiKey = (await new RedisKeyStore(admin, prefix).create({ name: 'fixture', requests_per_minute: 1000 })).key;
  const config = loadConfig(
    {
      ...sim.env(),
      REDIS_URL: testRedisUrl(),
      REDIS_KEY_PREFIX: prefix,
      GATEWAY_PORT: '0',
      IBKR_TICKLE_INTERVAL_MS: '0',
    },
    registry,
  );
  gw = await startGateway(config, {
    logger: createLogger({ name: 'fixture', level: 'silent' }),
    exit: false,
    routes: { ...ROUTES, 'venue-f': venueFRoutes } as never,
  });
});

afterAll(async () => {
  await gw?.shutdown('test');
  admin?.disconnect();
  await sim?.stop();
});

function get(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: gw.port, path, headers: { 'X-API-Key': apiKey } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

describe('a platform added in three steps', () => {
  it('is in every derived list: variables, the simulator env, budgets, OpenAPI, aliases', () => {
    const names = gatewayEnvNames(registry);
    for (const v of ['UPSTREAM_VENUE_F_URL', 'FIXTURE_API_KEY', 'FIXTURE_API_SECRET', 'FIXTURE_API_SECRET_FILE']) {
      expect(names).toContain(v);
    }
    expect(platformEnvNames(PLATFORMS, ALL_PARTS)).not.toContain('UPSTREAM_VENUE_F_URL');
    const simNames = Object.keys(sim.env());
    expect(simNames).toEqual(
      expect.arrayContaining(['UPSTREAM_VENUE_F_URL', 'FIXTURE_API_KEY', 'FIXTURE_API_SECRET_FILE']),
    );
    expect(envNames()).not.toContain('UPSTREAM_VENUE_F_URL');
    expect(sim.urls['venue-f']).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const config = loadConfig({}, registry);
    expect(config.budgets['venue-f']).toEqual({ perSecond: 4, burst: 2 });
    expect(config.platforms['venue-f'].urls.main).toBe('https://api.fixture.example');

    expect(gw.platforms.resolve('FIXTURE')?.key).toBe('venue-f');
    expect(gw.platforms.aliases).toMatchObject({ fixture: 'venue-f', kalshi: 'venue-b' });
    const doc = JSON.stringify(openApiDocument(gw.platforms));
    expect(doc).toContain('venue-f (Fixture Exchange)');
    expect(doc).toContain('fixture → venue-f');
  });

  it('is routed by the gateway, signed, and served by the simulator, which verifies the signature', async () => {
    sim.clearRequests();
    const answer = await get('/api/v1/fixture/things');
    expect(answer).toEqual({ status: 200, body: JSON.stringify({ things: ['a', 'b'] }) });
    const seen = sim.requests({ platform: 'venue-f' });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'GET', path: '/v9/things', auth: 'valid' });
    expect(seen[0]?.headers['x-api-key']).toBeUndefined();
  });

  it("passes the platform's own errors through", async () => {
    expect(await get('/api/v1/venue-f/nothing')).toEqual({ status: 404, body: '{"message":"no such thing"}' });
  });

  it('has no signer without credentials, and a partial set is a configuration error', () => {
    const config = loadConfig({}, registry);
    expect(config.platforms['venue-f'].signer).toBeUndefined();
    expect(() => loadConfig({ FIXTURE_API_KEY: 'k' }, registry)).toThrow(/Fixture credentials are incomplete/);
  });
});
