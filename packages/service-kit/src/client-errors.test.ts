import net from 'node:net';
import { Writable } from 'node:stream';
import { clientErrorAnswer } from './client-errors';
import { Lifecycle, serve, type RunningServer } from './lifecycle';
import { createLogger } from './logger';

const quiet = () =>
  createLogger({ name: 't', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes raw bytes and reads until the server closes the connection (a test fails by timeout if it never does). */
function raw(port: number, bytes: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      socket.end();
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text.slice(split + 4) });
    });
    socket.write(bytes);
  });
}

let server: RunningServer;
let handled = 0;

beforeAll(async () => {
  server = await serve(
    (_req, res) => {
      handled++;
      res.setHeader('Content-Type', 'application/json');
      res.end('{"ok":true}');
    },
    {
      port: 0,
      host: '127.0.0.1',
      logger: quiet(),
      lifecycle: new Lifecycle(),
      shutdownDelayMs: 0,
      drainTimeoutMs: 1000,
      exit: false,
    },
  );
});

afterAll(() => server.shutdown('test'));

beforeEach(() => {
  handled = 0;
});

const expectJsonError = (answer: RawAnswer, status: number, error: string) => {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(answer.headers.connection).toBe('close');
  expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  const body = JSON.parse(answer.body) as { error: string; message: string };
  expect(body).toEqual({ error, message: expect.any(String) });
  expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
};

describe('errors of the HTTP layer are answered as documented JSON, and the connection closes', () => {
  it('a malformed request line → 400 invalid_request', async () => {
    expectJsonError(await raw(server.port, 'GET /x HTTP/1.1 trailing\r\nHost: a\r\n\r\n'), 400, 'invalid_request');
    expectJsonError(await raw(server.port, 'NOT-HTTP\r\n\r\n'), 400, 'invalid_request');
    expect(handled).toBe(0);
  });

  it('a malformed header → 400 invalid_request', async () => {
    expectJsonError(await raw(server.port, 'GET / HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n'), 400, 'invalid_request');
  });

  it('headers over the size limit → 431 headers_too_large', async () => {
    const big = `GET / HTTP/1.1\r\nHost: a\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`;
    expectJsonError(await raw(server.port, big), 431, 'headers_too_large');
    expect(handled).toBe(0);
  });

  it('an expectation other than 100-continue → 417 expectation_failed, with the caller’s request id', async () => {
    const answer = await raw(
      server.port,
      'GET / HTTP/1.1\r\nHost: a\r\nExpect: something\r\nX-Request-Id: r-1\r\n\r\n',
    );
    expect(answer.status).toBe(417);
    expect(answer.headers['x-request-id']).toBe('r-1');
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body)).toEqual({ error: 'expectation_failed', message: expect.any(String) });
    expect(handled).toBe(0);
  });

  it('HTTP/1.1 without Host → 400 invalid_request; HTTP/1.0 without Host is served', async () => {
    expectJsonError(await raw(server.port, 'GET / HTTP/1.1\r\n\r\n'), 400, 'invalid_request');
    expect(handled).toBe(0);
    const old = await raw(server.port, 'GET / HTTP/1.0\r\n\r\n');
    expect(old.status).toBe(200);
    expect(old.body).toBe('{"ok":true}');
    expect(handled).toBe(1);
  });

  it('CONNECT → 405 method_not_allowed with an empty Allow (no proxy here), with the caller’s request id', async () => {
    const answer = await raw(
      server.port,
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nX-Request-Id: c-1\r\n\r\n',
    );
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('');
    expect(answer.headers['x-request-id']).toBe('c-1');
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body)).toEqual({
      error: 'method_not_allowed',
      message: 'CONNECT is not supported: this service is not a proxy',
    });
    expectJsonError(await raw(server.port, 'CONNECT example.com:443 HTTP/1.1\r\n\r\n'), 405, 'method_not_allowed');
    expect(handled).toBe(0);
  });

  it('a well-formed request on the same server is unaffected', async () => {
    const ok = await raw(server.port, 'GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
    expect(ok.status).toBe(200);
    expect(handled).toBe(1);
  });
});

describe('clientErrorAnswer', () => {
  it('maps the parser’s codes to statuses and stays silent for a gone peer', () => {
    expect(clientErrorAnswer('HPE_HEADER_OVERFLOW')?.code).toBe('headers_too_large');
    expect(clientErrorAnswer('HPE_CHUNK_EXTENSIONS_OVERFLOW')?.code).toBe('payload_too_large');
    expect(clientErrorAnswer('ERR_HTTP_REQUEST_TIMEOUT')?.code).toBe('request_timeout');
    expect(clientErrorAnswer('HPE_INVALID_METHOD')?.code).toBe('invalid_request');
    expect(clientErrorAnswer('ECONNRESET')).toBeUndefined();
  });
});
