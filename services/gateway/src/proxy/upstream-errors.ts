import type { ErrorCode } from '@depthgate/service-kit';
import type { UpstreamTarget } from '../platforms/types';

export class UpstreamTimeout extends Error {
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'UpstreamTimeout';
  }
}

export interface ClassifiedError {
  code: ErrorCode;
  message: string;
  /** Counts against the target's circuit. */
  upstreamFault: boolean;
  outcome: 'timeout' | 'error';
}

function codeOf(err: unknown): string {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | undefined;
  return String(e?.code ?? e?.cause?.code ?? '');
}

/**
 * Maps a failed upstream call to what the caller gets: refused or reset connections, DNS failures, TLS failures
 * and timeouts are 502 `bad_gateway`; a refused, unresolved or unreachable host says so with the target's own
 * `unreachable` message where it has one (the IBKR portal: how to start it). Messages name the host, never a
 * credential.
 */
export function classifyUpstreamError(err: unknown, target: UpstreamTarget, connectTimeoutMs: number): ClassifiedError {
  const host = target.host;
  const code = codeOf(err);
  const unreachable = (message: string): ClassifiedError => ({
    code: 'bad_gateway',
    message: target.unreachable?.message ?? message,
    upstreamFault: true,
    outcome: 'error',
  });
  if (err instanceof UpstreamTimeout) {
    return {
      code: 'bad_gateway',
      message: `Upstream ${host} did not answer within ${err.ms} ms`,
      upstreamFault: true,
      outcome: 'timeout',
    };
  }
  switch (code) {
    case 'ECONNREFUSED':
      return unreachable(`Upstream ${host} refused the connection`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return unreachable(`Upstream host ${host} could not be resolved`);
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return {
        ...unreachable(`Connecting to upstream ${host} timed out after ${connectTimeoutMs} ms`),
        outcome: 'timeout',
      };
    case 'UND_ERR_HEADERS_TIMEOUT':
      return {
        code: 'bad_gateway',
        message: `Upstream ${host} did not answer in time`,
        upstreamFault: true,
        outcome: 'timeout',
      };
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return {
        code: 'bad_gateway',
        message: `Upstream ${host} closed the connection`,
        upstreamFault: true,
        outcome: 'error',
      };
    case 'UND_ERR_INVALID_ARG':
      return {
        code: 'invalid_request',
        message: 'The request cannot be forwarded as given',
        upstreamFault: false,
        outcome: 'error',
      };
    default:
      if (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('ERR_SSL')) {
        return {
          code: 'bad_gateway',
          message: `TLS with upstream ${host} failed (${code})`,
          upstreamFault: true,
          outcome: 'error',
        };
      }
      return {
        code: 'bad_gateway',
        message: `The request to upstream ${host} failed`,
        upstreamFault: true,
        outcome: 'error',
      };
  }
}
