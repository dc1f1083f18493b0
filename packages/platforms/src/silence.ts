/**
 * When a feed is silent: the one rule both consumers of the venues' feeds apply (the gateway's WebSocket proxy and
 * the recorder). A venue shows an idle subscription alive by itself at its own rhythm (each descriptor's
 * `feeds.main.heartbeat`); a connection that has heard nothing — no message, heartbeat, ping frame or keep-alive
 * answer — for that rhythm plus a margin is silent: its subscriptions are replaced with fresh snapshots.
 *
 * How late is silent depends on what a false alarm costs the consumer (`FalseAlarm`):
 *
 * - `resubscribe` (the gateway's WebSocket proxy): one resubscription with a fresh snapshot, its clients lose nothing,
 *   while a late alarm leaves them trading on a book that stopped moving. The margin is a fixed 500 ms, not a share of
 *   the interval: what delays a heartbeat (the network, a busy event loop at either end) does not grow with the
 *   interval; it keeps a stall's detection within the interval + 1 s (the watchdog looks every 100 ms at most,
 *   @depthgate/feeds' FeedSocket) while a heartbeat half a second late is not yet called silence.
 * - `gap` (the recorder): a recorded `stall` gap, which on a feed without sequence numbers starts at the ticker's last
 *   verification — possibly minutes of data marked unverified — while a late alarm only delays the gap a stall makes
 *   anyway (no book is served wrong meanwhile: the rows simply stop). So one whole heartbeat may be missed, plus a
 *   second: twice the interval + 1 s.
 *
 * On a busy feed, market data keeps a connection heard; the rhythm matters on an idle one.
 */
import type { FeedHeartbeat, FeedSpec } from './descriptor';
import type { AnyDescriptor, Registry } from './env';

/** How much later than its rhythm a venue's heartbeat may come before the gateway calls its feed silent. */
export const SILENCE_MARGIN_MS = 500;
/** What the recorder adds to a whole missed heartbeat before it calls a feed silent. */
export const RECORDING_SILENCE_MARGIN_MS = 1000;

/** What a false alarm of silence costs the consumer: a resubscription (the gateway), or a recorded gap (the recorder). */
export type FalseAlarm = 'resubscribe' | 'gap';

/**
 * The silence threshold of a feed: its heartbeat interval plus 500 ms where a false alarm costs a resubscription;
 * twice the interval plus 1 s where it costs a recorded gap.
 */
export function feedSilenceMs(heartbeat: FeedHeartbeat, falseAlarm: FalseAlarm = 'resubscribe'): number {
  if (!Number.isInteger(heartbeat.intervalMs) || heartbeat.intervalMs <= 0) {
    throw new Error(
      `a feed's heartbeat interval must be a positive integer of milliseconds, not ${heartbeat.intervalMs}`,
    );
  }
  return falseAlarm === 'resubscribe'
    ? heartbeat.intervalMs + SILENCE_MARGIN_MS
    : 2 * heartbeat.intervalMs + RECORDING_SILENCE_MARGIN_MS;
}

/** The heartbeat of a platform's own feed (`feeds.main`), or undefined for a platform without a feed. */
export function mainFeedHeartbeat(descriptor: Pick<AnyDescriptor, 'feeds'>): FeedHeartbeat | undefined {
  return (descriptor.feeds as Readonly<Record<string, FeedSpec>> | undefined)?.main?.heartbeat;
}

/** How a consumer of a platform's feed judges it alive (`feedLiveness`). */
export interface FeedLiveness {
  /** The venue's own heartbeat interval. */
  heartbeatMs: number;
  /** Silence threshold of a connection: the override, else the heartbeat interval plus the margin. */
  stallMs: number;
  /**
   * The consumer's keep-alive interval: its own setting, except where the venue's only sign of life is its answer to
   * the consumer's text ping (`answer`): then at least as often as the venue asks, so that the threshold holds.
   */
  pingMs: number;
}

/**
 * The one liveness rule of the gateway's WebSocket proxy and the recorder: `stallMs` overrides the threshold for
 * every platform (WS_UPSTREAM_STALL_MS, RECORDER_STALL_TIMEOUT_MS), `pingMs` is the consumer's keep-alive setting.
 */
export function feedLiveness(
  descriptor: Pick<AnyDescriptor, 'key' | 'feeds'>,
  o: { stallMs: number | undefined; pingMs: number; falseAlarm: FalseAlarm },
): FeedLiveness {
  const beat = mainFeedHeartbeat(descriptor);
  if (!beat) throw new Error(`${descriptor.key}: its descriptor states no feed heartbeat`);
  const answer = beat.kind === 'answer' && (o.pingMs === 0 || o.pingMs > beat.intervalMs);
  return {
    heartbeatMs: beat.intervalMs,
    stallMs: o.stallMs ?? feedSilenceMs(beat, o.falseAlarm),
    pingMs: answer ? beat.intervalMs : o.pingMs,
  };
}

const KIND_TEXT: Record<FeedHeartbeat['kind'], string> = {
  'ping-frame': 'ping frames from the venue',
  message: 'a heartbeat message',
  channel: 'a heartbeat message per market (its heartbeat channel)',
  answer: 'none; it answers the consumer’s text ping',
};

const seconds = (ms: number) => `${(ms / 1000).toLocaleString('en-US', { maximumFractionDigits: 3 })} s`;

/**
 * The thresholds table of docs/websockets.md (between `<!-- silence -->` and `<!-- /silence -->`), one row per
 * platform with a feed, from the descriptors; silence.test.ts fails when the committed table differs.
 */
export function renderSilenceTable(registry: Registry): string {
  const rows = Object.values(registry).flatMap((d) => {
    const beat = mainFeedHeartbeat(d);
    if (!beat) return [];
    const source = beat.source.replace(/\|/g, '\\|');
    return [
      `| \`${d.key}\` (${d.title}) | ${KIND_TEXT[beat.kind]} | ${seconds(beat.intervalMs)} | ${seconds(feedSilenceMs(beat))} | ${seconds(feedSilenceMs(beat, 'gap'))} | ${source} |`,
    ];
  });
  return [
    '| platform | what the venue sends on an idle subscription | every | silent after (gateway) | silent after (recorder) | source |',
    '| --- | --- | ---: | ---: | ---: | --- |',
    ...rows,
  ].join('\n');
}
