import { Writable } from 'node:stream';
import { accessLogWriter, createLogger } from './logger';

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

it('access-log lines go to the same stream in the same format, without a redaction pass', () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  const logger = createLogger({ name: 'svc', level: 'info', destination: sink });
  const write = accessLogWriter(logger);
  write?.({ url: '/api/v1/x?a="b"', status: 200, aborted: false, skipped: undefined });
  logger.info({ secret: 'S' }, 'other');
  const [a, b] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(a).toEqual({
    level: 'info',
    time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    service: 'svc',
    name: 'svc',
    url: '/api/v1/x?a="b"',
    status: 200,
    aborted: false,
    msg: 'request',
  });
  expect(b).toMatchObject({ level: 'info', service: 'svc', name: 'svc', secret: '[redacted]' });
  expect(accessLogWriter(createLogger({ name: 'svc', level: 'warn', destination: sink }))).toBeUndefined();
});
