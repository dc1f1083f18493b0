/**
 * How the gateway judges an upstream connection of a platform alive (docs/websockets.md, "Silence"): silent after
 * the venue's heartbeat rhythm plus the margin (@depthgate/platforms `feedSilenceMs`, the rule the recorder applies
 * too), unless WS_UPSTREAM_STALL_MS overrides it for every platform; kept alive every WS_UPSTREAM_PING_MS, and, where
 * the venue's only sign of life is its answer to the consumer's text ping (the Polymarket CLOB), pinged at least as
 * often as its rhythm, so that the threshold derived from that rhythm holds.
 */
import { feedSilenceMs, mainFeedHeartbeat, type AnyDescriptor } from '@depthgate/platforms';
import type { GatewayConfig } from '../config';

export interface UpstreamLiveness {
  /** Silence threshold of an upstream connection. */
  stallMs: number;
  /** Keep-alive interval. */
  pingMs: number;
  /** The venue's own heartbeat interval (the gateway's heartbeat messages to the platform's clients keep it). */
  heartbeatMs: number;
}

export function upstreamLiveness(
  descriptor: AnyDescriptor,
  config: Pick<GatewayConfig, 'WS_UPSTREAM_STALL_MS' | 'WS_UPSTREAM_PING_MS'>,
): UpstreamLiveness {
  const heartbeat = mainFeedHeartbeat(descriptor);
  if (!heartbeat) throw new Error(`${descriptor.key} has a stream but its descriptor states no feed heartbeat`);
  return {
    heartbeatMs: heartbeat.intervalMs,
    stallMs: config.WS_UPSTREAM_STALL_MS ?? feedSilenceMs(heartbeat),
    pingMs:
      heartbeat.kind === 'answer'
        ? Math.min(config.WS_UPSTREAM_PING_MS, heartbeat.intervalMs)
        : config.WS_UPSTREAM_PING_MS,
  };
}
