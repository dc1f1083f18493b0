import http from 'node:http';
import type { Logger } from '@depthgate/service-kit';
import { startKeepAlives } from './keep-alive';
import type { GatewayPlatforms } from './platforms/registry';
import { ownCallsTo } from './testing/own-calls';

const until = async (f: () => boolean, what: string) => {
  const deadline = Date.now() + 5_000;
  while (!f()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('startKeepAlives', () => {
  it('stop cancels a keep-alive call under way and waits for its end: nothing is left running, nothing logged', async () => {
    // An upstream that never answers: the call would hold its pool connection for UPSTREAM_TIMEOUT_MS (here 300 s).
    const requests: http.IncomingMessage[] = [];
    const ended: http.IncomingMessage[] = [];
    const server = http.createServer((req) => {
      requests.push(req);
      req.socket.on('close', () => ended.push(req));
    });
    const { forwarder, target, close } = await ownCallsTo(
      server,
      { perSecond: 10, burst: 10 },
      {
        UPSTREAM_TIMEOUT_MS: '300000',
      },
    );
    const platforms = {
      byKey: { 'venue-e': { keepAlive: { target, method: 'GET', path: '/tickle', intervalMs: 3_600_000 } } },
    } as unknown as GatewayPlatforms;
    const ping = jest.spyOn(forwarder, 'ping');
    const logged: string[] = [];
    const logger = {
      info: (_o: unknown, m: string) => logged.push(m),
      warn: (_o: unknown, m: string) => logged.push(m),
    } as unknown as Logger;
    try {
      const stop = startKeepAlives(platforms, forwarder, logger);
      await until(() => requests.length === 1, 'the /tickle call at the upstream');
      let settled = false;
      void ping.mock.results[0]?.value.then(
        () => (settled = true),
        () => (settled = true),
      );
      await stop();
      // Its promise had settled when stop resolved (a settled promise's callbacks run within a turn).
      await new Promise((r) => setImmediate(r));
      expect(settled).toBe(true);
      // The request itself was cancelled: the upstream sees its connection end.
      await until(() => ended.length === 1, 'the cancelled call’s connection to end');
      expect([requests[0]?.url, logged]).toEqual(['/tickle', []]);
    } finally {
      await close();
    }
  });
});
