/**
 * What an HTTP replay's caller cannot hold (docs/replay.md, "HTTP replay"), on the harness (testing/harness.ts) with
 * one large window stored besides (far more NDJSON than the loopback's socket buffers take, so that a caller that
 * does not read holds the replay on its backpressure): a caller has at most REPLAY_HTTP_MAX_CONCURRENT_* replays
 * running at once (one more: 429 in the JSON error form, with Retry-After; the place comes back when one ends), and a
 * caller that stops reading is cut after REPLAY_HTTP_WRITE_TIMEOUT_MS.
 */
import http from 'node:http';
import { waitFor } from '@depthgate/test-utils';
import { startHarness, storeWindow, type Harness } from './testing/harness';
import { randomWindow } from './testing/history';
import { VENUES } from './testing/venues';

const BIG = 'replay-big-market';
const us = VENUES.find((v) => v.exchange === 'venue_a_us');
if (!us) throw new Error('the venue table has no Polymarket US');

/**
 * The enclosing describe's harness with `env`, and the large window stored (Polymarket US: every change sends the
 * whole book); `path` replays it.
 */
function harness(env: Record<string, string>): { h: Harness; path: string } {
  const got = {} as { h: Harness; path: string };
  beforeAll(async () => {
    got.h = await startHarness({ seed: 'http-limits', events: 20, env });
    const w = randomWindow('http-limits|big', (us as NonNullable<typeof us>).grid, { events: 20_000, gapRate: 0 });
    await storeWindow(got.h.db, 'venue_a_us', BIG, w);
    const first = w.start?.ts ?? 0;
    const last = Math.max(...w.deltas.map((d) => d.ts));
    got.path = `/api/venue_a_us/replay/${BIG}?from=${first}&to=${last}`;
  }, 120_000);
  afterAll(async () => {
    await got.h?.close();
  });
  return got;
}

/** A replay request whose caller reads the head and then nothing more (until `read`). */
interface Stalled {
  status: number;
  /** Reads on: resolves with everything the body held once the connection closes. */
  read(): Promise<string>;
  destroy(): void;
}

function stalled(h: Harness, path: string, key: string): Promise<Stalled> {
  return new Promise((resolve, reject) => {
    const url = new URL(`${h.url}${path}`);
    const req = http.get({
      host: url.hostname,
      port: url.port,
      path: url.pathname + url.search,
      headers: { 'X-API-Key': key },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      res.pause();
      res.on('error', () => undefined);
      const read = () =>
        new Promise<string>((done) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.socket.once('close', () => done(Buffer.concat(chunks).toString('utf8')));
          res.resume();
        });
      resolve({ status: res.statusCode ?? 0, read, destroy: () => req.destroy() });
    });
  });
}

/** Replays of Polymarket US cut so far (replay_streams_total, outcome cut). */
async function cut(h: Harness): Promise<number> {
  const values = (await h.registry.getSingleMetric('replay_streams_total')?.get())?.values ?? [];
  return values
    .filter((v) => v.labels.exchange === 'venue_a_us' && v.labels.outcome === 'cut')
    .reduce((n, v) => n + v.value, 0);
}

describe('HTTP replays per key', () => {
  const t = harness({ REPLAY_HTTP_MAX_CONCURRENT_PER_KEY: '2' });

  it('a key has at most REPLAY_HTTP_MAX_CONCURRENT_PER_KEY replays running; one more is 429 with Retry-After', async () => {
    const key = await t.h.issue({ requests_per_minute: 100_000 });
    const a = await stalled(t.h, t.path, key);
    const b = await stalled(t.h, t.path, key);
    expect([a.status, b.status]).toEqual([200, 200]);
    const over = await fetch(`${t.h.url}${t.path}`, { headers: { 'X-API-Key': key } });
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toBe('5');
    expect(await over.json()).toEqual({
      error: 'too_many_connections',
      message: 'This API key may run 2 HTTP replays at once; retry when one has finished',
    });
    // Another key is not affected.
    const other = await fetch(`${t.h.url}${t.path.replace(BIG, 'nope')}`, {
      headers: { 'X-API-Key': await t.h.issue({ requests_per_minute: 100_000 }) },
    });
    expect(other.status).toBe(404);
    // A place comes back when a replay ends (here: its caller goes away).
    a.destroy();
    await waitFor(
      async () => {
        const res = await fetch(`${t.h.url}${t.path.replace(BIG, 'nope')}`, { headers: { 'X-API-Key': key } });
        await res.arrayBuffer();
        return res.status === 404;
      },
      { timeoutMs: 10_000, what: 'the place to come back' },
    );
    b.destroy();
  }, 60_000);
});

describe('HTTP replays of a caller that stops reading', () => {
  const t = harness({ REPLAY_HTTP_WRITE_TIMEOUT_MS: '300' });

  it('is cut after REPLAY_HTTP_WRITE_TIMEOUT_MS (no end line)', async () => {
    const key = await t.h.issue({ requests_per_minute: 100_000 });
    const before = await cut(t.h);
    const a = await stalled(t.h, t.path, key);
    expect(a.status).toBe(200);
    await waitFor(async () => (await cut(t.h)) === before + 1, { timeoutMs: 20_000, what: 'the server to cut it' });
    // What the socket held is still delivered, then the connection ends without the end line.
    const body = await a.read();
    expect(body.length).toBeGreaterThan(0);
    expect(body).not.toContain('{"type":"end"');
  }, 60_000);
});
