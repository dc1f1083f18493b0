// How the libraries that cannot set a header reach the gateway, checked on the wire against a recording server:
// clob-client's URL credentials become HTTP Basic; polymarket-us's fetch goes to `{platform}.{domain}` through the
// dispatcher, which adds the key for that domain only.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Chain, ClobClient } from '@polymarket/clob-client';
import { PolymarketUS } from 'polymarket-us';
import { getGlobalDispatcher, setGlobalDispatcher } from 'undici';
import { gatewayDispatcher } from './libraries/polymarket-us.ts';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

let server: http.Server;
let port: number;
const seen: Seen[] = [];

before(async () => {
  server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'application/json' }).end(req.url?.endsWith('/time') ? '1772841600' : '{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

after(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('reaching the gateway without a header option', () => {
  it('clob-client: the key as user name of the host URL goes as HTTP Basic, under the path prefix', async () => {
    seen.length = 0;
    const client = new ClobClient(`http://dg_testkey@127.0.0.1:${port}/api/v1/venue-a-clob`, Chain.POLYGON);
    assert.equal(await client.getServerTime(), 1772841600);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.url, '/api/v1/venue-a-clob/time');
    assert.equal(seen[0]?.headers.authorization, `Basic ${Buffer.from('dg_testkey:').toString('base64')}`);
  });

  it('polymarket-us: `venue-a-us.{domain}` reaches the gateway with the key; other hosts get no key', async () => {
    seen.length = 0;
    const previous = getGlobalDispatcher();
    const dispatcher = gatewayDispatcher({ url: '', port, key: 'dg_testkey', baseDomain: 'gw.test' });
    setGlobalDispatcher(dispatcher);
    try {
      const root = `http://venue-a-us.gw.test:${port}`;
      await new PolymarketUS({ gatewayBaseUrl: root, apiBaseUrl: root }).events.list({ limit: 1 });
      await fetch(`http://127.0.0.1:${port}/elsewhere`);
    } finally {
      setGlobalDispatcher(previous);
      await dispatcher.close();
    }
    assert.deepEqual(
      seen.map((s) => [s.url, s.headers.host, s.headers['x-api-key']]),
      [
        ['/v1/events?limit=1', `venue-a-us.gw.test:${port}`, 'dg_testkey'],
        ['/elsewhere', `127.0.0.1:${port}`, undefined],
      ],
    );
    // The SDK's own headers survive the interceptor.
    assert.equal(seen[0]?.headers['content-type'], 'application/json');
  });
});
