import type { Redis } from 'ioredis';
import type { Logger } from '@depthgate/service-kit';
import type { Budget } from '../config';

/**
 * Upstream budgets: a GCRA (generic cell rate algorithm) limiter per upstream origin, counted in Redis so that all
 * gateway replicas together never exceed an upstream's documented limit. A request over budget reserves the next
 * free slot and waits for it if that is at most `maxWaitMs` away; otherwise it is refused (429
 * `upstream_rate_limited`). Redis's own clock (TIME) is used, so replicas' clocks do not matter.
 *
 * If Redis is unreachable each process falls back to the same limiter in memory: every replica then enforces the
 * full budget on its own (documented; exposed as `gateway_budget_degraded`).
 */
const GCRA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local max_wait = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local wait = tat - tolerance - now
if wait < 0 then wait = 0 end
if wait > max_wait then return {0, wait} end
local new_tat = tat + interval
redis.call('SET', KEYS[1], tostring(new_tat), 'PX', math.floor((new_tat - now) / 1000) + 1000)
return {1, wait}
`;

export interface BudgetDecision {
  allowed: boolean;
  /** Microseconds to wait before sending (allowed) or until a slot frees up (refused). */
  waitUs: number;
}

type BudgetRedis = Redis & {
  dgBudget(key: string, interval: string, tolerance: string, maxWait: string): Promise<[number, number]>;
};

function params(budget: Budget): { interval: number; tolerance: number } {
  const interval = Math.round(1_000_000 / budget.perSecond);
  return { interval, tolerance: interval * Math.max(0, budget.burst - 1) };
}

/** The same arithmetic in memory, for when Redis is unreachable. */
export class LocalGcra {
  private readonly tats = new Map<string, number>();
  take(key: string, budget: Budget, maxWaitUs: number, nowUs: number): BudgetDecision {
    const { interval, tolerance } = params(budget);
    const tat = Math.max(this.tats.get(key) ?? 0, nowUs);
    const wait = Math.max(0, tat - tolerance - nowUs);
    if (wait > maxWaitUs) return { allowed: false, waitUs: wait };
    this.tats.set(key, tat + interval);
    return { allowed: true, waitUs: wait };
  }
}

export class UpstreamBudgets {
  private readonly redis: BudgetRedis;
  private readonly local = new LocalGcra();
  private degraded = false;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly maxWaitMs: number,
    private readonly logger: Logger,
    private readonly onDegraded: (degraded: boolean) => void = () => undefined,
  ) {
    if (!('dgBudget' in redis)) redis.defineCommand('dgBudget', { numberOfKeys: 1, lua: GCRA });
    this.redis = redis as BudgetRedis;
  }

  /**
   * A slot of the budget of the upstream origin `origin` (every target on it shares one budget), granted up to
   * `maxWaitMs` ahead (UPSTREAM_BUDGET_MAX_WAIT_MS unless told).
   */
  async take(origin: string, budget: Budget, maxWaitMs = this.maxWaitMs): Promise<BudgetDecision> {
    const maxWaitUs = maxWaitMs * 1000;
    const { interval, tolerance } = params(budget);
    if (this.redis.status === 'ready') {
      try {
        const [allowed, wait] = await this.redis.dgBudget(
          `${this.prefix}budget:${origin}`,
          String(interval),
          String(tolerance),
          String(maxWaitUs),
        );
        this.setDegraded(false);
        return { allowed: allowed === 1, waitUs: Number(wait) };
      } catch (err) {
        this.setDegraded(true, err);
      }
    } else {
      this.setDegraded(true);
    }
    return this.local.take(origin, budget, maxWaitUs, Math.round(performance.now() * 1000));
  }

  /**
   * A slot of `fraction` of the budget of `origin`: a budget of its own, of that fraction of the rate and one request
   * at a time, shared by every replica as the whole is; granted up to `maxWaitMs` ahead. The gateway's own background
   * reads (the WebSocket proxy's book reconciliation) take one before their slot of the whole budget, so that they
   * never use more than that fraction of it: callers always keep the rest.
   */
  share(origin: string, budget: Budget, fraction: number, maxWaitMs: number): Promise<BudgetDecision> {
    return this.take(`${origin} share`, { perSecond: budget.perSecond * fraction, burst: 1 }, maxWaitMs);
  }

  private setDegraded(degraded: boolean, err?: unknown): void {
    if (degraded === this.degraded) return;
    this.degraded = degraded;
    this.onDegraded(degraded);
    if (degraded) {
      this.logger.error(
        { err: { message: (err as Error | undefined)?.message } },
        'upstream budgets degraded: Redis unreachable, each replica now enforces the full budget on its own',
      );
    } else {
      this.logger.warn('upstream budgets restored: counting in Redis again');
    }
  }
}
