import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { startSimulator, type Simulator } from './index';
import { httpsGet } from './testing/clients';

function raw(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

describe('CDN-style edge behaviour', () => {
  let sim: Simulator;
  let plain: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 3, updatesPerSecond: 0, rateLimits: false });
    plain = await startSimulator({ seed: 3, updatesPerSecond: 0, rateLimits: false, edge: false });
  });
  afterAll(async () => {
    await sim.stop();
    await plain.stop();
  });

  it('adds Set-Cookie, Server, CF-Ray and a timing header to every answer, errors included', async () => {
    for (const url of [
      `${sim.urls['venue-d']}/currencies`,
      `${sim.urls['venue-b']}/markets/NOPE`,
      `${sim.urls['venue-a-us']}/v1/sports`,
    ]) {
      const { headers } = await raw(url);
      expect(headers['set-cookie']?.[0]).toMatch(/^__cf_bm=/);
      expect(headers.server).toBe('cloudflare');
      expect(headers['cf-ray']).toMatch(/^[0-9a-f]{16}-IAD$/);
      expect(headers['x-envoy-upstream-service-time']).toBeDefined();
    }
  });

  it('gzips bodies of 1 KiB or more only when the client accepts gzip', async () => {
    const zipped = await raw(`${sim.urls['venue-d']}/currencies`, { 'Accept-Encoding': 'gzip, deflate' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toBe('Accept-Encoding');
    const unzipped = gunzipSync(zipped.body);
    expect(Number(zipped.headers['content-length'])).toBe(zipped.body.length);
    const identity = await raw(`${sim.urls['venue-d']}/currencies`);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(unzipped.equals(identity.body)).toBe(true);
    expect(identity.body.length).toBeGreaterThanOrEqual(1024);
    const small = await raw(`${sim.urls['venue-d']}/time`, { 'Accept-Encoding': 'gzip' });
    expect(small.headers['content-encoding']).toBeUndefined();
  });

  it('is off with edge: false, and never on the IBKR portal', async () => {
    const { headers } = await raw(`${plain.urls['venue-d']}/currencies`, { 'Accept-Encoding': 'gzip' });
    expect(headers['set-cookie']).toBeUndefined();
    expect(headers.server).toBeUndefined();
    expect(headers['content-encoding']).toBeUndefined();
    const portal = await httpsGet(`${sim.urls['venue-e/portal']}/tickle`, sim.credentials.ibkr.certPem);
    expect(portal.status).toBe(200);
  });
});
