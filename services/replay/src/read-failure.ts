/**
 * What a failed read of the recorded history means for the caller, one answer for the HTTP replay and the WebSocket
 * replay alike:
 *
 * - `timeout`: the read ran over its time budget (the scope's, before the answer started; or ClickHouse's own
 *   `max_execution_time`) — HTTP 503 `query_timeout`, WebSocket 1013 (try again later);
 * - `unavailable`: ClickHouse cannot answer (down, restarting, the query killed) — HTTP 503 `service_unavailable`
 *   with `Retry-After`, WebSocket 1013;
 * - `cancelled`: the caller went away (its scope was cancelled): nothing to answer;
 * - `data`: recorded rows that cannot be replayed; `error`: anything else — HTTP 500, WebSocket 1011.
 *
 * 1013 is the WebSocket's 503 (RFC 6455's registry: "Try Again Later … a temporary condition, e.g. it is overloaded"),
 * so a client can tell a busy or restarting store, worth retrying, from a failure that will happen again.
 */
import { classifyClickHouseError, type QueryScope } from '@depthgate/history-store';
import { ReplayDataError } from './engine';

export interface ReadFailure {
  kind: 'timeout' | 'unavailable' | 'cancelled' | 'data' | 'error';
  /** ClickHouse's error code, when it named one. */
  code?: number;
  message: string;
}

export function readFailure(err: unknown, scope: QueryScope | undefined): ReadFailure {
  const message = err instanceof Error ? err.message : String(err);
  if (scope?.reason === 'cancelled') return { kind: 'cancelled', message };
  if (scope?.reason === 'timeout') return { kind: 'timeout', message };
  if (err instanceof ReplayDataError) return { kind: 'data', message };
  const failure = classifyClickHouseError(err);
  const code = failure.code === undefined ? {} : { code: failure.code };
  if (failure.kind === 'timeout') return { kind: 'timeout', ...code, message: failure.message };
  if (failure.kind === 'unavailable' || failure.kind === 'cancelled')
    return { kind: 'unavailable', ...code, message: failure.message };
  return { kind: 'error', ...code, message: failure.message };
}

/** The WebSocket close for a failed read; `what` names the read in a budget's reason ("reading the window"). */
export function closeFor(failure: ReadFailure, what: string): { code: number; reason: string } {
  switch (failure.kind) {
    case 'timeout':
      return { code: 1013, reason: `${what} ran over its time budget; try again later` };
    case 'unavailable':
      return { code: 1013, reason: 'the history store is unavailable; try again later' };
    default:
      return { code: 1011, reason: 'replay failed' };
  }
}
