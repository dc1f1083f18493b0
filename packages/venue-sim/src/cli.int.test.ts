import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { parseCli, runCli } from './cli/main';
import { ENV_NAMES } from './env';
import { get } from './testing/clients';

describe('CLI', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'venue-sim-cli-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('--write-env writes the contract variables, and the secrets next to the file with mode 0600; logs are JSON lines', async () => {
    const lines: string[] = [];
    const out = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        cb();
      },
    });
    const file = path.join(dir, 'sim', 'upstreams.env');
    const { sim } = await runCli(
      parseCli(['--port', '0', '--write-env', file, '--seed', '42', '--updates-per-second', '0']),
      out,
    );
    try {
      const text = readFileSync(file, 'utf8');
      const vars = Object.fromEntries(
        text
          .split('\n')
          .filter((l) => /^[A-Z0-9_]+=/.test(l))
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      expect(Object.keys(vars)).toEqual([...ENV_NAMES]);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      for (const name of ENV_NAMES.filter((n) => n.endsWith('_FILE'))) {
        expect(path.dirname(vars[name] as string)).toBe(path.dirname(file));
        expect(statSync(vars[name] as string).mode & 0o777).toBe(0o600);
      }
      expect(readFileSync(vars.COINBASE_API_SECRET_FILE as string, 'utf8')).toBe(sim.credentials.coinbase.secret);
      expect((await get(`${sim.urls.control}/ready`)).status).toBe(200);
      const parsed = lines.map((l) => JSON.parse(l) as { msg?: string; level: string });
      expect(parsed.map((l) => l.msg)).toEqual(expect.arrayContaining(['venue simulator started', 'ready']));
    } finally {
      await sim.stop();
    }
  });

  const built = path.resolve(__dirname, '..', 'dist', 'cli.js');
  (existsSync(built) ? test : test.skip)('the built CLI answers /ready and exits 0 on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [built, '--port', '0', '--updates-per-second', '10', '--write-env', path.join(dir, 'up.env')],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const deadline = Date.now() + 20_000;
    while (!/"ready":"(http[^"]+)"/.test(stdout)) {
      if (Date.now() > deadline) throw new Error(`no ready line: ${stdout}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const ready = (/"ready":"(http[^"]+)"/.exec(stdout) as RegExpExecArray)[1] as string;
    expect((await get(ready)).status).toBe(200);
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect(stdout).toMatch(/"msg":"stopped"/);
  });
});
