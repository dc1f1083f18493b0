import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, startServiceProcess } from './index';

/**
 * A stand-in service: counts its starts in a file, listens on PORT (exit 1 when it cannot, as a service does) and
 * answers /ready — unless FAIL is set, when it exits at once.
 */
const SERVICE = `
const fs = require('node:fs');
fs.appendFileSync(process.env.STARTS, 'x');
if (process.env.FAIL) process.exit(3);
const server = require('node:http').createServer((req, res) => res.end('ok'));
server.on('error', () => process.exit(1));
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

describe('startServiceProcess', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'dg-service-'));
    writeFileSync(path.join(dir, 'service.js'), SERVICE);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const starts = () => readFileSync(path.join(dir, 'starts'), 'utf8').length;

  it('starts the service again on another port when its port was taken before it could bind it', async () => {
    // Another process holds the first port handed out.
    const squatter = net.createServer();
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', () => r()));
    const taken = (squatter.address() as net.AddressInfo).port;
    const ports = [taken, await freePort()];
    try {
      const s = await startServiceProcess({
        entry: path.join(dir, 'service.js'),
        portVariable: 'PORT',
        what: 'the stand-in',
        env: { ...process.env, STARTS: path.join(dir, 'starts') },
        ports: async () => ports.shift() as number,
      });
      expect(s.port).not.toBe(taken);
      expect((await fetch(`${s.url}/ready`)).status).toBe(200);
      expect(starts()).toBe(2);
      await s.stop();
      expect(s.child.exitCode).toBe(0);
    } finally {
      squatter.close();
    }
  });

  it('an exit before ready for any other reason is the error, with no second start', async () => {
    await expect(
      startServiceProcess({
        entry: path.join(dir, 'service.js'),
        portVariable: 'PORT',
        what: 'the stand-in',
        env: { ...process.env, STARTS: path.join(dir, 'starts'), FAIL: '1' },
      }),
    ).rejects.toThrow('the stand-in exited (3)');
    expect(starts()).toBe(1);
  });
});
