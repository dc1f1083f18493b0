/**
 * The recorder's stop and a REST reconciliation read in flight: the venue's answer, held back by a proxy in front of
 * the simulator's Gemini REST API until the recorder has begun to stop, is still compared with the live book (the
 * stop waits RECONCILE_STOP_WAIT_MS for it, the feeds still open), so a match is a verification point; an answer
 * that never comes does not hold the stop beyond that bound.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@depthgate/test-utils';
import { createRecorderHarness, type RecorderHarness } from './testing/harness';

jest.setTimeout(120_000);

/** A proxy to `target` that holds the answers of the paths `held` matches (read from the venue at once) until released. */
async function holdingProxy(target: string, held: (path: string) => boolean) {
  let holding = false;
  const waiting: (() => void)[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const upstream = request(
      new URL(req.url ?? '/', target),
      { method: req.method, headers: req.headers },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => {
          const send = () => res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(chunks));
          if (holding && held(req.url ?? '')) waiting.push(send);
          else send();
        });
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hold: () => (holding = true),
    get held() {
      return waiting.length;
    },
    release: () => {
      holding = false;
      for (const send of waiting.splice(0)) send();
    },
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

describe('recorder stop with a reconciliation read in flight', () => {
  let h: RecorderHarness | undefined;
  let proxy: Awaited<ReturnType<typeof holdingProxy>> | undefined;
  afterEach(async () => {
    proxy?.release();
    await proxy?.close();
    await h?.close();
    h = undefined;
    proxy = undefined;
  });

  /** A recorder of Gemini (venue_c) whose books are live, with a reconciliation read's answer held by the proxy. */
  async function recordingWithAnswerHeld() {
    h = await createRecorderHarness({ sim: { updatesPerSecond: 50 } });
    proxy = await holdingProxy(h.env.UPSTREAM_VENUE_C_URL as string, (p) => p.startsWith('/v1/book/'));
    const recorder = await h.startInProcess({ RECORDER_EXCHANGES: 'venue_c', UPSTREAM_VENUE_C_URL: proxy.url });
    await h.waitLive(recorder);
    proxy.hold();
    await waitFor(() => proxy!.held > 0, { what: 'a REST book answer held' });
    return recorder;
  }

  it('compares an answer that arrives once the recorder is stopping with the live book: a match, before its feeds close', async () => {
    const recorder = await recordingWithAnswerHeld();
    const matched = async () =>
      (await h!.metrics!.reconciliations.get()).values.find(
        (v) => v.labels.exchange === 'venue_c' && v.labels.result === 'match',
      )?.value ?? 0;
    const before = await matched();
    const stopped = recorder.stop();
    const venue = recorder.venues.get('venue_c') as unknown as { reconcileClosed: boolean };
    await waitFor(() => venue.reconcileClosed, { what: 'the venue stopping its reconciliation' });
    // The stop waits for the answer before it closes the feeds (a closed feed leaves no live book to compare with).
    expect(h!.sim.feedFaults.stats('gemini').connections).toBeGreaterThan(0);
    proxy!.release();
    await stopped;
    // Compared, and equal to the book at some moment near the request: a verification point (written when later than
    // the ticker's last one, as any match is; a stopped feed's read was counted 'void' and gave none).
    expect(await matched()).toBe(before + 1);
  });

  it('does not wait for an answer that never comes beyond its bound', async () => {
    const recorder = await recordingWithAnswerHeld();
    // Never released while the recorder stops: the stop still ends, and says what it gave up.
    await recorder.stop();
    expect(proxy!.held).toBeGreaterThan(0);
    expect(h!.logs.lines.some((l) => l.includes('reconciliation read still in flight'))).toBe(true);
  });
});
