import type { Logger } from '@depthgate/service-kit';
import type { GatewayPlatforms } from './platforms/registry';
import type { Forwarder } from './proxy/forwarder';

/**
 * Background keep-alive calls platforms ask for (the IBKR Client Portal session expires unless `/tickle` is
 * called about every minute). Runs once at start and then on the interval; failures are logged, never thrown.
 */
export function startKeepAlives(platforms: GatewayPlatforms, forwarder: Forwarder, logger: Logger): () => void {
  const timers: NodeJS.Timeout[] = [];
  for (const platform of Object.values(platforms.byKey)) {
    const spec = platform.keepAlive;
    if (!spec) continue;
    let lastOk: boolean | undefined;
    const tick = async () => {
      try {
        const status = await forwarder.ping(spec.target, spec.method, spec.path);
        const ok = status !== undefined && status < 400;
        if (ok !== lastOk)
          logger[ok ? 'info' : 'warn']({ target: spec.target.id, status }, ok ? 'keep-alive ok' : 'keep-alive refused');
        lastOk = ok;
      } catch (err) {
        if (lastOk !== false)
          logger.warn({ target: spec.target.id, err: { message: (err as Error).message } }, 'keep-alive failed');
        lastOk = false;
      }
    };
    void tick();
    const timer = setInterval(() => void tick(), spec.intervalMs);
    timer.unref();
    timers.push(timer);
  }
  return () => timers.forEach(clearInterval);
}
