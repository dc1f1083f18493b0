/**
 * @depthgate/client as a package, used from outside the repository: packed by npm with its build, installed into an
 * empty project outside the workspace, and its quickstart (examples/quickstart.mts, the README's examples) run there
 * against a gateway on the venue simulator and a history service with generated history (the in-process twins of
 * `./dev up --sim`'s). Both module systems are loaded, and both type declarations compile.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { generateInto } from '@depthgate/history-tools';
import { repoRoot } from '@depthgate/test-utils';
import { createHarness, type Harness } from '../../../services/history/src/testing/harness';
import { startGatewayHarness, type GatewayHarness } from '../../../services/gateway/src/testing/harness';

jest.setTimeout(120_000);

const run = promisify(execFile);
const CLIENT = path.join(repoRoot, 'packages', 'client');

let gw: GatewayHarness;
let h: Harness;
let project: string;
let env: Record<string, string>;

beforeAll(async () => {
  gw = await startGatewayHarness();
  // The harness's 1 s upstream timeout is for the gateway's own timeout tests; here a loaded machine (the stack's
  // books trading at start) must not turn a slow answer into a 502.
  const gateway = await gw.gateway({ UPSTREAM_TIMEOUT_MS: '30000' });
  const key = await gw.newKey();
  // One Redis namespace for both services: the key works on both, as the demo key of `./dev up` does.
  h = await createHarness({ env: { REDIS_KEY_PREFIX: gw.prefix } });
  const now = Date.now();
  await generateInto(h.ch, {
    tickers: [{ exchange: 'venue_b', ticker: 'KXBTCD-26JUN01-T95000' }],
    from: now - 20 * 60_000,
    to: now,
    snapshotIntervalMs: 300_000,
    eventsPerMinute: 30,
    seed: 'package',
    batchRows: 1_000_000,
  });
  project = mkdtempSync(path.join(os.tmpdir(), 'dg-client-package-'));
  // The build is `./dev test`'s (pnpm build runs before the integration tests): pack it as it is.
  await run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', project], { cwd: CLIENT });
  const tarball = readdirSync(project).find((f) => f.endsWith('.tgz'));
  if (tarball === undefined) throw new Error('npm pack wrote no tarball');
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'outside', private: true }));
  await run('npm', ['install', `./${tarball}`, '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: project,
  });
  env = {
    ...(process.env as Record<string, string>),
    GATEWAY_URL: `http://127.0.0.1:${gateway.port}`,
    HISTORY_URL: (await h.listen()).url,
    DEMO_API_KEY: key,
  };
});

afterAll(async () => {
  await h?.close();
  await gw?.close();
  if (project) rmSync(project, { recursive: true, force: true });
});

describe('the packed @depthgate/client, outside the workspace', () => {
  it('holds its build, its licence and its changelog, and nothing of the workspace', async () => {
    const { stdout } = await run('tar', ['tzf', readdirSync(project).find((f) => f.endsWith('.tgz')) as string], {
      cwd: project,
    });
    const files = stdout.split('\n').filter(Boolean);
    for (const f of ['LICENSE', 'CHANGELOG.md', 'README.md', 'dist/esm/index.js', 'dist/cjs/index.d.ts']) {
      expect(files).toContain(`package/${f}`);
    }
    expect(files.filter((f) => /\.tsbuildinfo$|\.test\.|\/src\//.test(f))).toEqual([]);
  });

  it('runs the quickstart against the gateway and the history service', async () => {
    copyFileSync(path.join(CLIENT, 'examples', 'quickstart.mts'), path.join(project, 'quickstart.mts'));
    const { stdout } = await run(process.execPath, ['quickstart.mts'], { cwd: project, env });
    const [, mine, theirs] = /checksums (\S+) (\S+)/.exec(stdout) ?? [];
    expect(mine).toMatch(/^[0-9]+$/);
    expect(mine).toBe(theirs);
    expect(stdout).toMatch(/moments replayed/);
    // Trades, bars and events: the generated books trade (packages/history-tools).
    const [, trades] = /(\d+) trades in the last hour/.exec(stdout) ?? [];
    expect(Number(trades)).toBeGreaterThan(0);
    expect(stdout).toMatch(/^bar \S+Z \S+ \S+ \S+ \S+ volume \S+ vwap \S+ trades \d+$/m);
    expect(stdout).toMatch(/events \{"delta":[1-9]\d*,"trade":\d+,/);
    expect(stdout).toContain('0.3 0.475');
    expect(stdout).toMatch(/kalshi markets 2 request id \S+/);
    // The service's error code is the error's code; an upstream's own error body passes through as http_error.
    expect(stdout).toContain('history error 404 unknown_ticker');
    expect(stdout).toMatch(/gateway error 404 http_error [0-9a-f-]{36}/);
  });

  it('loads as CommonJS too, and both type declarations compile', async () => {
    const cjs = `const c = require('@depthgate/client'); console.log(typeof c.HistoryClient, c.EXCHANGES.map((e) => e.key).join(','));`;
    const { stdout } = await run(process.execPath, ['-e', cjs], { cwd: project });
    expect(stdout.trim()).toBe('function venue_b,venue_c,venue_a_us,venue_a_clob,venue_d');
    const typed = `import { HistoryClient, HttpError, type Exchange, type MarketEvent, type ReplayEvent } from '@depthgate/client';
const exchange: Exchange = 'venue_b';
const client = new HistoryClient({ baseUrl: 'http://127.0.0.1:1' });
export async function first(): Promise<string | undefined> {
  for await (const e of client.replay(exchange, 'T', { from: 0 }) as AsyncIterable<ReplayEvent>) {
    if (e.type === 'book') return e.ts;
  }
  return undefined;
}
export const isServiceError = (e: unknown): boolean => e instanceof HttpError && e.code === 'unknown_ticker';
export async function bestAtTrades(): Promise<(string | undefined)[]> {
  const out: (string | undefined)[] = [];
  for await (const e of client.events(exchange, 'T', { from: 0 }) as AsyncIterable<MarketEvent>) {
    if (e.type === 'trade') out.push(e.book?.best().bid?.price);
  }
  return out;
}
`;
    writeFileSync(path.join(project, 'typed.mts'), typed);
    writeFileSync(
      path.join(project, 'typed.cts'),
      typed.replace(/^import (.*) from '@depthgate\/client';/, 'import $1 from "@depthgate/client";'),
    );
    const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    for (const file of ['typed.mts', 'typed.cts']) {
      await expect(
        run(
          process.execPath,
          [tsc, '--noEmit', '--strict', '--module', 'nodenext', '--target', 'es2022', '--skipLibCheck', 'false', file],
          {
            cwd: project,
          },
        ),
      ).resolves.toBeDefined();
    }
  });
});
