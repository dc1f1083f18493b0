import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { linesSink } from '@depthgate/test-utils';
import { ACCESS_LOG_BATCH, ACCESS_LOG_FLUSH_MS, accessLogWriter, createLogger } from './logger';

it('redacts keys, authorization, cookies and secrets wherever they appear', () => {
  const lines: string[] = [];
  const logger = createLogger({ name: 't', level: 'info', destination: linesSink(lines) });
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

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

it('access-log lines go to the same stream in the same format, without a redaction pass', () => {
  const writes: string[] = [];
  const logger = createLogger({ name: 'svc', level: 'info', destination: linesSink(writes) });
  const write = accessLogWriter(logger);
  write?.({ url: '/api/v1/x?a="b"', status: 200, aborted: false, skipped: undefined });
  logger.info({ secret: 'S' }, 'other');
  jest.advanceTimersByTime(ACCESS_LOG_FLUSH_MS);
  const lines = writes.join('').split('\n').filter(Boolean);
  const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(records.find((r) => r.msg === 'request')).toEqual({
    level: 'info',
    time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    service: 'svc',
    name: 'svc',
    url: '/api/v1/x?a="b"',
    status: 200,
    aborted: false,
    msg: 'request',
  });
  expect(records.find((r) => r.msg === 'other')).toMatchObject({
    level: 'info',
    service: 'svc',
    name: 'svc',
    secret: '[redacted]',
  });
  expect(records).toHaveLength(2);
  expect(accessLogWriter(createLogger({ name: 'svc', level: 'warn', destination: linesSink(writes) }))).toBeUndefined();
});

it('hands access-log lines to the stream together: after ACCESS_LOG_FLUSH_MS, or at once at ACCESS_LOG_BATCH', () => {
  const writes: string[] = [];
  const write = accessLogWriter(createLogger({ name: 'svc', level: 'info', destination: linesSink(writes) }));
  for (let i = 0; i < 5; i++) write?.({ url: `/r/${i}`, status: 200 });
  jest.advanceTimersByTime(ACCESS_LOG_FLUSH_MS - 1);
  expect(writes).toEqual([]);
  jest.advanceTimersByTime(1);
  expect(writes).toHaveLength(1);
  expect(
    writes[0]
      ?.split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { url: string }).url),
  ).toEqual(['/r/0', '/r/1', '/r/2', '/r/3', '/r/4']);
  // More than a batch: written as it fills, every line once and in order, the rest after the interval.
  writes.length = 0;
  const long = 'x'.repeat(1000);
  const lines = Math.ceil(ACCESS_LOG_BATCH / 1000) + 10;
  for (let i = 0; i < lines; i++) write?.({ url: `/${long}/${i}`, status: 200 });
  expect(writes).toHaveLength(1);
  jest.advanceTimersByTime(ACCESS_LOG_FLUSH_MS);
  expect(writes).toHaveLength(2);
  const urls = writes
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((l) => Number((JSON.parse(l) as { url: string }).url.slice(long.length + 2)));
  expect(urls).toEqual(Array.from({ length: lines }, (_, i) => i));
});

it('gives every line the time it was written, to the millisecond (the text is made once a millisecond)', () => {
  const writes: string[] = [];
  const logger = createLogger({ name: 'svc', level: 'info', destination: linesSink(writes) });
  const write = accessLogWriter(logger);
  jest.setSystemTime(Date.parse('2026-11-27T10:00:00.123Z'));
  write?.({ url: '/a', status: 200 });
  write?.({ url: '/b', status: 200 });
  logger.info('same millisecond');
  jest.setSystemTime(Date.parse('2026-11-27T10:00:00.124Z'));
  write?.({ url: '/c', status: 200 });
  logger.info('next millisecond');
  jest.advanceTimersByTime(ACCESS_LOG_FLUSH_MS);
  const times = Object.fromEntries(
    writes
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { url?: string; msg: string; time: string })
      .map((r) => [r.url ?? r.msg, r.time]),
  );
  expect(times).toEqual({
    '/a': '2026-11-27T10:00:00.123Z',
    '/b': '2026-11-27T10:00:00.123Z',
    'same millisecond': '2026-11-27T10:00:00.123Z',
    '/c': '2026-11-27T10:00:00.124Z',
    'next millisecond': '2026-11-27T10:00:00.124Z',
  });
});

it('keeps access-log lines whole and in order: characters beyond ASCII, and a line longer than the batch', () => {
  const writes: string[] = [];
  const write = accessLogWriter(createLogger({ name: 'svc', level: 'info', destination: linesSink(writes) }));
  const huge = `/${'y'.repeat(ACCESS_LOG_BATCH)}`;
  write?.({ url: '/prix/€/ü', status: 200 });
  write?.({ url: huge, status: 200 });
  write?.({ url: '/after', status: 200 });
  jest.advanceTimersByTime(ACCESS_LOG_FLUSH_MS);
  const urls = writes
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { url: string }).url);
  expect(urls).toEqual(['/prix/€/ü', huge, '/after']);
});

it('writes access-log lines still pending when the process exits', () => {
  // The service's own logger (pino's asynchronous file stream on stdout), three lines, then an exit in that turn.
  const dist = path.join(__dirname, '../dist/logger.js');
  const script = `
    const { createLogger, accessLogWriter } = require(${JSON.stringify(dist)});
    const write = accessLogWriter(createLogger({ name: 'svc', level: 'info' }));
    for (let i = 0; i < 3; i++) write({ url: '/exit/' + i, status: 200 });
    process.exit(0);`;
  const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  const urls = out
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { url: string }).url);
  expect(urls).toEqual(['/exit/0', '/exit/1', '/exit/2']);
});
