import { spawnSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { Writable } from 'node:stream';
import express from 'express';
import request from 'supertest';
import { healthRoutes } from './health';
import { Lifecycle, serve } from './lifecycle';
import { createLogger } from './logger';

const quiet = () =>
  createLogger({ name: 't', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });

/** `app` served on a free port of 127.0.0.1, without delay before the drain, in the test's process. */
const serveLocal = (app: express.Express, lifecycle: Lifecycle, drainTimeoutMs: number) =>
  serve(app, {
    port: 0,
    host: '127.0.0.1',
    logger: quiet(),
    lifecycle,
    shutdownDelayMs: 0,
    drainTimeoutMs,
    exit: false,
  });

describe('health and readiness', () => {
  it('/health is the spec body; /ready reflects checks and draining', async () => {
    const lifecycle = new Lifecycle();
    let redisUp = true;
    const app = express();
    app.use(
      healthRoutes({
        lifecycle,
        checks: [
          { name: 'redis', check: () => redisUp },
          { name: 'slow', check: () => new Promise<boolean>((r) => setTimeout(() => r(true), 10)) },
        ],
        timeoutMs: 200,
      }),
    );
    expect((await request(app).get('/health')).body).toEqual({ status: 'ok' });
    const ready = await request(app).get('/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { redis: true, slow: true } });
    redisUp = false;
    const notReady = await request(app).get('/ready');
    expect(notReady.status).toBe(503);
    expect(notReady.body.checks.redis).toBe(false);
    redisUp = true;
    lifecycle.draining = true;
    expect((await request(app).get('/ready')).status).toBe(503);
    expect((await request(app).get('/health')).status).toBe(200);
  });

  it('a check that hangs counts as not ready after the timeout', async () => {
    const app = express();
    app.use(
      healthRoutes({
        lifecycle: new Lifecycle(),
        checks: [{ name: 'hang', check: () => new Promise(() => {}) }],
        timeoutMs: 50,
      }),
    );
    const res = await request(app).get('/ready');
    expect(res.status).toBe(503);
    expect(res.body.checks.hang).toBe(false);
  });
});

describe('graceful shutdown', () => {
  it('lets an in-flight request finish, refuses new connections, then runs hooks', async () => {
    const lifecycle = new Lifecycle();
    const order: string[] = [];
    lifecycle.onShutdown('first', () => void order.push('first'));
    lifecycle.onShutdown('second', () => void order.push('second'));
    const app = express();
    // The handler says when the request reached it: the shutdown starts then, not after a guessed delay.
    const { promise: reached, resolve: arrived } = Promise.withResolvers<void>();
    app.get('/slow', (_req, res) => {
      arrived();
      setTimeout(() => res.json({ done: true }), 300);
    });
    const running = await serveLocal(app, lifecycle, 5000);
    const inflight = new Promise<string>((resolve, reject) => {
      http
        .get(`http://127.0.0.1:${running.port}/slow`, { agent: false }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve(body));
        })
        .on('error', reject);
    });
    await reached;
    const done = running.shutdown('test');
    expect(lifecycle.draining).toBe(true);
    expect(JSON.parse(await inflight)).toEqual({ done: true });
    await done;
    expect(order).toEqual(['second', 'first']);
    await expect(
      new Promise((resolve, reject) =>
        http.get(`http://127.0.0.1:${running.port}/slow`, { agent: false }, resolve).on('error', reject),
      ),
    ).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe('drain deadline', () => {
  it('answers a request still unanswered at the deadline with a JSON 503, not a reset, and completes', async () => {
    const lifecycle = new Lifecycle();
    const app = express();
    const { promise: reached, resolve: arrived } = Promise.withResolvers<void>();
    app.get('/never', () => arrived()); // a handler that holds its request past any grace
    const running = await serveLocal(app, lifecycle, 200);
    const answer = new Promise<{ status?: number; connection?: string; body: string }>((resolve, reject) => {
      http
        .get(`http://127.0.0.1:${running.port}/never`, { agent: false }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection, body }));
        })
        .on('error', reject);
    });
    await reached;
    await running.shutdown('test');
    const { status, connection, body } = await answer;
    expect(status).toBe(503);
    expect(connection).toBe('close');
    expect(JSON.parse(body)).toMatchObject({ error: 'service_unavailable' });
  });
});

describe('signals', () => {
  it('a second SIGTERM during the shutdown joins it: the hooks finish and the process exits 0', () => {
    // The built module in a process of its own (it installs the signal handlers only when it may exit).
    const dist = (name: string) => JSON.stringify(path.join(__dirname, `../dist/${name}.js`));
    const script = `
      const { Lifecycle, serve } = require(${dist('lifecycle')});
      const { createLogger } = require(${dist('logger')});
      (async () => {
        const lifecycle = new Lifecycle();
        lifecycle.onShutdown('flush', async () => {
          await new Promise((r) => setTimeout(r, 300));
          console.log('flushed');
        });
        const logger = createLogger({ name: 't', level: 'silent' });
        await serve((_req, res) => res.end(), { port: 0, host: '127.0.0.1', logger, lifecycle, shutdownDelayMs: 0, drainTimeoutMs: 100 });
        process.kill(process.pid, 'SIGTERM');
        setTimeout(() => process.kill(process.pid, 'SIGTERM'), 100);
      })();`;
    const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect([run.status, run.signal, run.stdout.trim()]).toEqual([0, null, 'flushed']);
  });
});

describe('reusePort', () => {
  it('lets two processes (here: two servers) share a port only when asked', async () => {
    const make = (name: string) => {
      const app = express();
      app.get('/', (_req, res) => void res.send(name));
      return app;
    };
    const common = { host: '127.0.0.1', logger: quiet(), shutdownDelayMs: 0, drainTimeoutMs: 1000, exit: false };
    const a = await serve(make('a'), { ...common, port: 0, lifecycle: new Lifecycle(), reusePort: true });
    const b = await serve(make('b'), { ...common, port: a.port, lifecycle: new Lifecycle(), reusePort: true });
    expect(b.port).toBe(a.port);
    await expect(serve(make('c'), { ...common, port: a.port, lifecycle: new Lifecycle() })).rejects.toThrow(
      /EADDRINUSE/,
    );
    const seen = new Set<string>();
    for (let i = 0; i < 40 && seen.size < 2; i++) {
      seen.add(
        await new Promise<string>((resolve, reject) =>
          http
            .get(`http://127.0.0.1:${a.port}/`, { agent: false }, (res) => {
              let body = '';
              res.on('data', (c) => (body += c));
              res.on('end', () => resolve(body));
            })
            .on('error', reject),
        ),
      );
    }
    expect([...seen].sort()).toEqual(['a', 'b']);
    await a.shutdown('test');
    await b.shutdown('test');
  });
});
