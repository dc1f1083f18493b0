import type { Logger } from '@depthgate/service-kit';
import type { GatewayPlatforms } from './platforms/registry';
import type { Forwarder } from './proxy/forwarder';

/**
 * Background keep-alive calls platforms ask for (the IBKR Client Portal session expires unless `/tickle` is
 * called about every minute). Runs once at start and then on the interval; failures are logged, never thrown.
 * The returned stop ends the interval and cancels the calls under way (their budget wait, their connection, their
 * answer), then waits for them: at most for a budget check in Redis they were making (REDIS_COMMAND_TIMEOUT_MS), so
 * none is left running after the upstream pools and Redis close, and none holds the shutdown for UPSTREAM_TIMEOUT_MS.
 */
export function startKeepAlives(
  platforms: GatewayPlatforms,
  forwarder: Forwarder,
  logger: Logger,
): () => Promise<void> {
  const timers: NodeJS.Timeout[] = [];
  const stopping = new AbortController();
  const inFlight = new Set<Promise<void>>();
  for (const platform of Object.values(platforms.byKey)) {
    const spec = platform.keepAlive;
    if (!spec) continue;
    let lastOk: boolean | undefined;
    const tick = async () => {
      try {
        const status = await forwarder.ping(spec.target, spec.method, spec.path, stopping.signal);
        const ok = status !== undefined && status < 400;
        if (ok !== lastOk)
          logger[ok ? 'info' : 'warn']({ target: spec.target.id, status }, ok ? 'keep-alive ok' : 'keep-alive refused');
        lastOk = ok;
      } catch (err) {
        if (stopping.signal.aborted) return; // cancelled by stop: no outcome
        if (lastOk !== false)
          logger.warn({ target: spec.target.id, err: { message: (err as Error).message } }, 'keep-alive failed');
        lastOk = false;
      }
    };
    const run = () => {
      const call = tick().finally(() => inFlight.delete(call));
      inFlight.add(call);
    };
    run();
    const timer = setInterval(run, spec.intervalMs);
    timer.unref();
    timers.push(timer);
  }
  return async () => {
    timers.forEach(clearInterval);
    stopping.abort();
    await Promise.all(inFlight);
  };
}
