import { Writable } from 'node:stream';
import { createLogger } from './logger';

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
    },
    'hello',
  );
  const out = lines.join('');
  expect(out).toContain('hello');
  for (let i = 1; i <= 8; i++) expect(out).not.toContain(`SECRET${i}`);
  expect(out).toContain('[redacted]');
});
