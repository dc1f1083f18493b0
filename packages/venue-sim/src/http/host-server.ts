import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { FaultRegistry } from './faults';
import type { RateLimiter } from './rate-limit';
import type { RequestLog } from './request-log';
import type { Router } from './router';
import type { AuthCheck, AuthInput, HostId, PlatformErrors, RecordedRequest, SimRequest, SimResponse } from './types';

const MAX_BODY = 1024 * 1024;

export interface HostDefinition {
  host: HostId;
  router: Router;
  errors: PlatformErrors;
  /** Checks the platform's request signature; absent for hosts without signing. */
  verify?: (input: AuthInput) => AuthCheck;
  /**
   * A request to a public route that carries credentials which do not verify: answer 401 (true) or serve it
   * anyway (false). Only recorded either way.
   */
  rejectInvalidOnPublic?: boolean;
  /** A gate in front of every route (the IBKR session); returns the refusal, or undefined to go on. */
  gate?: (req: SimRequest) => SimResponse | undefined;
  /** WebSocket upgrades (feeds); gets the recorded handshake. */
  upgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer, record: RecordedRequest) => void;
  tls?: { key: string; cert: string };
  /** CDN-style edge headers and gzip (see SimulatorOptions.edge). */
  edge?: boolean;
}

const GZIP_MIN_BYTES = 1024;

/** What the CDN in front of a real host adds to every answer; a gateway must not pass any of it on. */
function edgeHeaders(): Record<string, string | string[]> {
  return {
    server: 'cloudflare',
    'cf-ray': `${randomBytes(8).toString('hex')}-IAD`,
    'set-cookie': [`__cf_bm=${randomBytes(24).toString('base64url')}; path=/; HttpOnly; Secure; SameSite=None`],
    'x-envoy-upstream-service-time': '3',
  };
}

export interface HostContext {
  log: RequestLog;
  faults: FaultRegistry;
  limiter: RateLimiter;
  clock: () => number;
  onError?: (err: unknown) => void;
}

const HTML_PAGE = (status: number) =>
  `<!DOCTYPE html>\n<html lang="en-US">\n<head><title>${status} ${http.STATUS_CODES[status] ?? 'Error'}</title></head>\n` +
  `<body>\n<center><h1>${status} ${http.STATUS_CODES[status] ?? 'Error'}</h1></center>\n<hr><center>cloudflare</center>\n` +
  `</body>\n</html>\n`;

/** One simulated host: node:http (or https) with the request pipeline faults → rate limit → route → auth → handler. */
export class HostServer {
  readonly server: http.Server | https.Server;
  private readonly timers = new Set<NodeJS.Timeout>();
  private closing = false;

  constructor(
    private readonly def: HostDefinition,
    private readonly ctx: HostContext,
  ) {
    const listener = (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch((err: unknown) => {
        ctx.onError?.(err);
        if (!res.headersSent) this.write(res, def.errors.serverError(500));
        else res.destroy();
      });
    };
    this.server = def.tls
      ? https.createServer({ key: def.tls.key, cert: def.tls.cert }, listener)
      : http.createServer(listener);
    this.server.keepAliveTimeout = 65_000;
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      // From the upgrade on the socket is the handler's, errors included (a client that resets a refused handshake):
      // without a listener the error would be thrown and end the process.
      socket.on('error', () => socket.destroy());
      const record = this.record(req, true);
      if (!def.upgrade) {
        record.status = 404;
        socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      def.upgrade(req, socket, head, record);
    });
    this.server.on('clientError', (_err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      else socket.destroy();
    });
  }

  listen(port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.server.once('error', onError);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', onError);
        const addr = this.server.address();
        resolve(typeof addr === 'object' && addr ? addr.port : port);
      });
    });
  }

  close(): Promise<void> {
    this.closing = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private record(req: IncomingMessage, websocket: boolean): RecordedRequest {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    return this.ctx.log.add({
      platform: this.def.host,
      method: req.method ?? 'GET',
      path: q < 0 ? url : url.slice(0, q),
      query: q < 0 ? '' : url.slice(q + 1),
      headers: req.headers,
      auth: 'not_required',
      status: 0,
      receivedAt: this.ctx.clock(),
      ...(websocket ? { websocket: true } : {}),
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        resolve();
      }, ms);
      this.timers.add(t);
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { def, ctx } = this;
    const record = this.record(req, false);
    const method = record.method;
    const body = method === 'GET' || method === 'HEAD' ? Buffer.alloc(0) : await readBody(req);

    const fault = ctx.faults.take(def.host, record.path);
    let truncate = false;
    if (fault) {
      record.fault = fault.kind;
      switch (fault.kind) {
        case 'latency':
          await this.sleep(fault.ms ?? 1000);
          break;
        case 'status':
          return this.finish(res, record, def.errors.serverError(fault.status ?? 503));
        case 'html': {
          const status = fault.status ?? 502;
          return this.finish(res, record, { status, body: HTML_PAGE(status), contentType: 'text/html; charset=utf-8' });
        }
        case 'reset':
          req.socket.resetAndDestroy();
          return;
        case 'hang':
          if (fault.ms !== undefined) {
            await this.sleep(fault.ms);
            req.socket.destroy();
          }
          return;
        case 'truncate':
          truncate = true;
          break;
      }
    }
    if (this.closing) return;

    const match = def.router.match(method, record.path);
    const decision = ctx.limiter.check(def.host, record.path, match?.route.auth === 'required');
    if (!decision.ok) return this.finish(res, record, def.errors.rateLimited(decision.budget));
    if (decision.delayMs > 0) await this.sleep(decision.delayMs);

    if (!match) return this.finish(res, record, def.errors.notFound({ path: record.path }), truncate);

    if (def.verify) {
      const check = def.verify({ method, path: record.path, query: record.query, headers: req.headers, body });
      if (match.route.auth === 'required') {
        record.auth = check.state;
        if (check.error) record.authError = check.error;
        if (check.state !== 'valid') {
          return this.finish(res, record, def.errors.unauthorized(check.error ?? 'missing credentials'), truncate);
        }
      } else if (check.state !== 'absent') {
        record.auth = check.state;
        if (check.error) record.authError = check.error;
        if (check.state === 'invalid' && def.rejectInvalidOnPublic) {
          return this.finish(res, record, def.errors.unauthorized(check.error ?? 'invalid credentials'), truncate);
        }
      }
    }

    const simReq: SimRequest = {
      platform: def.host,
      method,
      path: record.path,
      query: record.query,
      params: new URLSearchParams(record.query),
      headers: req.headers,
      body,
      pathParams: match.params,
      record,
      raw: req,
    };
    if (def.gate) {
      const refusal = def.gate(simReq);
      if (refusal) return this.finish(res, record, refusal, truncate);
    }
    const response = await match.route.handler(simReq);
    this.finish(res, record, response, truncate);
  }

  private finish(res: ServerResponse, record: RecordedRequest, response: SimResponse, truncate = false): void {
    record.status = response.status;
    if (this.closing || res.destroyed) return;
    if (!truncate) return this.write(res, response);
    const buf = Buffer.isBuffer(response.body) ? response.body : Buffer.from(response.body);
    res.writeHead(response.status, {
      'content-type': response.contentType ?? 'application/json; charset=utf-8',
      'content-length': String(buf.length),
      ...response.headers,
    });
    // Half the body, then the connection goes away: the client sees a premature close.
    res.write(buf.subarray(0, Math.floor(buf.length / 2)), () => res.socket?.destroy());
  }

  private write(res: ServerResponse, response: SimResponse): void {
    let buf = Buffer.isBuffer(response.body) ? response.body : Buffer.from(response.body);
    const headers: Record<string, string | string[]> = {
      'content-type': response.contentType ?? 'application/json; charset=utf-8',
    };
    if (this.def.edge) {
      Object.assign(headers, edgeHeaders());
      if (buf.length >= GZIP_MIN_BYTES && /\bgzip\b/.test(String(res.req.headers['accept-encoding'] ?? ''))) {
        buf = gzipSync(buf);
        headers['content-encoding'] = 'gzip';
        headers.vary = 'Accept-Encoding';
      }
    }
    headers['content-length'] = String(buf.length);
    res.writeHead(response.status, { ...headers, ...response.headers });
    res.end(buf);
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new Error('request body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
