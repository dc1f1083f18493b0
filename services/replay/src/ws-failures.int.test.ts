/**
 * How a replay that cannot read its window ends (read-failure.ts), on the harness (testing/harness.ts) with a time
 * budget of 1 ms (`REPLAY_QUERY_TIMEOUT_MS`), which every opening read of ClickHouse runs over: the socket is closed
 * with 1013 (try again later) and a reason naming the read, never 1000 or a bare 1011; the HTTP replay of the same
 * window answers 503 `query_timeout` in the JSON error form, the same failure's answer over HTTP.
 */
import { WsTestClient } from '@depthgate/test-utils';
import { startHarness, TICKERS, type Harness } from './testing/harness';
import { VENUES } from './testing/venues';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ seed: 'failures', events: 60, env: { REPLAY_QUERY_TIMEOUT_MS: '1' } });
}, 90_000);

afterAll(async () => {
  await h?.close();
});

const kalshi = VENUES.find((v) => v.exchange === 'venue_b');
if (!kalshi?.socket) throw new Error('the venue table has no Kalshi socket');
const socket = kalshi.socket;

it('a read over its time budget closes the socket with 1013 and a reason that names the read', async () => {
  const { first, last } = h.span(kalshi.exchange);
  const c = await WsTestClient.open(h.wsUrl(socket.platform, `from=${first}&to=${last}&speed=max`), {
    headers: { 'X-API-Key': h.key },
  });
  for (const frame of socket.subscribe(TICKERS[kalshi.exchange])) c.send(frame);
  await c.untilClosed(30_000);
  expect(c.closeCode).toBe(1013);
  expect(c.closeReason).toMatch(
    /^(resolving the markets|reading the window) ran over its time budget; try again later$/,
  );
  // Nothing of the replay was sent before the close (acks of the subscribe at most).
  expect(c.texts.filter((t) => !socket.isAck(t))).toEqual([]);
});

it('the HTTP replay of the same window answers 503 query_timeout', async () => {
  const { first, last } = h.span(kalshi.exchange);
  const r = await h.replayed(`/api/${kalshi.exchange}/replay/${TICKERS[kalshi.exchange]}?from=${first}&to=${last}`);
  expect(r.status).toBe(503);
  expect(JSON.parse(r.body)).toMatchObject({ error: 'query_timeout' });
});
