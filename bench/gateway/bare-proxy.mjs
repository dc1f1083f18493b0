// Node's floor for a reverse proxy, the benchmark's run (e): what any proxy written on Node's own HTTP server and
// undici costs before it does anything of its own. It forwards the request as it came (method, path, headers, body)
// to one upstream over a keep-alive pool, through undici's handler API as the gateway's forwarder does, and streams
// the answer back (status, headers, body). Nothing else: no key, no rate limit, no signing, no log, no metrics.
// The caller signs, as for nginx in (b). Two of these share a port (reusePort), as the gateway's two processes do.
// Usage: BARE_PORT=… BARE_UPSTREAM=http://127.0.0.1:… node bench/gateway/bare-proxy.mjs
import http from 'node:http';
import { Pool } from 'undici';

const port = Number(process.env.BARE_PORT);
const upstream = process.env.BARE_UPSTREAM;
if (!port || !upstream) throw new Error('BARE_PORT and BARE_UPSTREAM are required');
const pool = new Pool(upstream, { connections: 64, pipelining: 1, keepAliveTimeout: 4_000 });

/** Hop-by-hop headers (RFC 9110 7.6.1) are the connection's, not the message's. */
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'host']);

const server = http.createServer((req, res) => {
  const headers = {};
  for (const [name, value] of Object.entries(req.headers)) if (!HOP.has(name)) headers[name] = value;
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  pool.dispatch(
    { method: req.method, path: req.url, headers, body: hasBody ? req : null },
    {
      onRequestStart() {},
      onResponseStart(_c, statusCode, upstreamHeaders) {
        const out = {};
        for (const [name, value] of Object.entries(upstreamHeaders)) if (!HOP.has(name)) out[name] = value;
        res.writeHead(statusCode, out);
      },
      onResponseData(_c, chunk) {
        res.write(chunk);
      },
      onResponseEnd() {
        res.end();
      },
      onResponseError(_c, err) {
        if (res.headersSent) res.destroy(err);
        else {
          res.writeHead(502, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: 'bad_gateway', message: String(err.message) }));
        }
      },
    },
  );
});
server.keepAliveTimeout = 65_000;
server.listen({ port, host: '127.0.0.1', reusePort: true });
process.on('SIGTERM', () => {
  server.close();
  void pool.close();
  process.exit(0);
});
