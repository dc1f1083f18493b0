import { Router } from 'express';
import type * as z from 'zod';
import type { HealthBody, ReadyBody } from './contract';
import type { Lifecycle } from './lifecycle';

export interface ReadinessCheck {
  name: string;
  /** Resolves true when the dependency is usable. Rejections and timeouts count as not ready. */
  check: () => Promise<boolean> | boolean;
}

async function withTimeout(check: ReadinessCheck, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      Promise.resolve().then(check.check),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
  } catch {
    return false;
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/**
 * `/health` is liveness and the spec's `{"status":"ok"}`: it answers while the process can serve at all.
 * `/ready` is readiness: every dependency check passes and the process is not draining.
 */
export function healthRoutes(options: { lifecycle: Lifecycle; checks: ReadinessCheck[]; timeoutMs?: number }): Router {
  const router = Router();
  const timeoutMs = options.timeoutMs ?? 1000;
  router.get('/health', (_req, res) => {
    res.json({ status: 'ok' } satisfies z.output<typeof HealthBody>);
  });
  router.get('/ready', async (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    if (options.lifecycle.draining) {
      res.status(503).json({ status: 'draining', checks: {} } satisfies z.output<typeof ReadyBody>);
      return;
    }
    const results = await Promise.all(options.checks.map((c) => withTimeout(c, timeoutMs)));
    const checks = Object.fromEntries(options.checks.map((c, i) => [c.name, results[i] === true]));
    const ready = results.every((r) => r === true);
    res
      .status(ready ? 200 : 503)
      .json({ status: ready ? 'ready' : 'not_ready', checks } satisfies z.output<typeof ReadyBody>);
  });
  return router;
}
