import { Writable } from 'node:stream';
import { accessLoggerFor, createLogger } from './logger';

it('redacts keys, authorization, cookies and secrets wherever they appear', () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  const logger = createLogger({ name: 't', level: 'info', destination: sink });
  logger.info(
    {
      req: { headers: { 'x-api-key': 'dg_SECRET1', authorization: 'Bearer SECRET2', cookie: 'sid=SECRET3' } },
      upstream: { secret: 'SECRET4', passphrase: 'SECRET5', signature: 'SECRET6', privateKey: 'SECRET7' },
      headers: { 'x-api-key': 'dg_SECRET8' },
      secret: 'SECRET9',
      apiKey: 'SECRET10',
      token: 'SECRET11',
    },
    'hello',
  );
  const out = lines.join('');
  expect(out).toContain('hello');
  for (let i = 1; i <= 11; i++) expect(out).not.toContain(`SECRET${i}`);
  expect(out).toContain('[redacted]');
});

it('the access-log twin writes to the same stream with the same service name, and skips redaction', () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  const logger = createLogger({ name: 'svc', level: 'info', destination: sink });
  const access = accessLoggerFor(logger);
  access.info({ url: '/api/v1/x', status: 200 }, 'request');
  logger.info({ secret: 'S' }, 'other');
  const [a, b] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(a).toMatchObject({ service: 'svc', level: 'info', url: '/api/v1/x', status: 200, msg: 'request' });
  expect(b).toMatchObject({ service: 'svc', secret: '[redacted]' });
  expect(access.level).toBe('info');
});
