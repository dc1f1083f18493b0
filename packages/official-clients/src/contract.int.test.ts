// The contract suite: every read-only method of the official client libraries, called unchanged, directly against
// the simulator and through a gateway started here against it; docs/official-clients-results.md is its table.
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { RedisKeyStore, createRedisClient, waitForRedis, type Redis } from '@depthgate/auth';
import { loadConfig, startGateway, type RunningGateway } from '@depthgate/gateway';
import { createLogger } from '@depthgate/service-kit';
import { repoRoot, testRedisUrl, uniqueName } from '@depthgate/test-utils';
import { startSimulator, type Simulator } from '@depthgate/venue-sim';
import { readCatalogue } from './catalogue.ts';
import { DeclaredTypes } from './declared-types.ts';
import { MODES, runMethod, type Env, type LibrarySpec, type Mode, type Result } from './harness.ts';
import { LIBRARIES } from './libraries/index.ts';
import { REPORT_PATH, renderReport } from './report.ts';

/** `{platform}.gw.test` reaches a platform at its own root (GATEWAY_BASE_DOMAIN); resolved by the test's dispatcher. */
const BASE_DOMAIN = 'gw.test';

let sim: Simulator;
let gateway: RunningGateway;
let admin: Redis;
let env: Env;
let types: DeclaredTypes;
const results: Result[] = [];
const clients = new Map<string, unknown>();

before(async () => {
  sim = await startSimulator({ seed: 11, updatesPerSecond: 0, rateLimits: false });
  admin = createRedisClient(testRedisUrl(), { name: 'contract-admin', offlineQueue: true });
  await waitForRedis(admin, 5000);
  const prefix = `${uniqueName('contract')}:`;
  const { key } = await new RedisKeyStore(admin, prefix).create({ name: 'official-clients', requests_per_minute: 1e6 });
  const silent = new Writable({ write: (_chunk, _enc, cb) => cb() });
  gateway = await startGateway(
    loadConfig({
      ...sim.env(),
      REDIS_URL: testRedisUrl(),
      REDIS_KEY_PREFIX: prefix,
      GATEWAY_PORT: '0',
      GATEWAY_BASE_DOMAIN: BASE_DOMAIN,
      // No upstream budgets (each read is one call among hundreds), no keep-alive calls in the request record.
      UPSTREAM_BUDGETS: 'venue-a=0,venue-a-clob=0,venue-a-us=0,venue-b=0,venue-c=0,venue-d=0,venue-e=0',
      IBKR_TICKLE_INTERVAL_MS: '0',
    }),
    { logger: createLogger({ name: 'contract-gateway', level: 'error', destination: silent }), exit: false },
  );
  await waitForRedis(gateway.auth.redis, 5000);
  const catalogue = await readCatalogue(sim);
  env = {
    sim,
    gateway: { url: `http://127.0.0.1:${gateway.port}`, port: gateway.port, key, baseDomain: BASE_DOMAIN },
    catalogue,
  };
  types = DeclaredTypes.load(
    LIBRARIES.flatMap((lib) => lib.methods.map((m) => m.type ?? lib.declared(m.name)).filter((r) => r !== undefined)),
  );
});

after(async () => {
  await gateway?.shutdown('test');
  admin?.disconnect();
  await sim?.stop();
});

function clientFor(lib: LibrarySpec<unknown>, mode: Mode): unknown {
  const id = `${lib.label}:${mode}`;
  if (!clients.has(id)) clients.set(id, lib.client(mode, env));
  return clients.get(id);
}

for (const lib of LIBRARIES) {
  describe(lib.pkg, () => {
    for (const spec of lib.methods) {
      for (const mode of MODES) {
        it(`${spec.name} (${mode})`, async () => {
          const result = await runMethod(lib, spec, clientFor(lib, mode), mode, env, types);
          results.push(result);
          if (spec.exception) {
            assert.notEqual(result.outcome, 'pass', `works now: remove the exception (${spec.exception})`);
          } else if (result.problems.length > 0) {
            assert.fail(`${result.problems.join('\n')}\nrequests: ${result.requests.join(', ') || 'none'}`);
          }
        });
      }
    }
  });
}

describe('the results table', () => {
  it(`${REPORT_PATH} is what this run produced (DG_WRITE_CONTRACT_REPORT=1 rewrites it)`, async () => {
    const expected = LIBRARIES.reduce((n, lib) => n + lib.methods.length * MODES.length, 0);
    assert.equal(results.length, expected, 'every method ran in both modes');
    const file = path.join(repoRoot, REPORT_PATH);
    const produced = renderReport(LIBRARIES, results);
    if (process.env.DG_WRITE_CONTRACT_REPORT === '1') await writeFile(file, produced);
    const committed = await readFile(file, 'utf8').catch(() => '');
    assert.equal(committed, produced, `${REPORT_PATH} is stale: run ./dev contract-report`);
  });
});
