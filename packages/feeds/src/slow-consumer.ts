/**
 * The close of a WebSocket whose client does not take what it is sent: the gateway's proxy (its unsent data above
 * WS_MAX_BUFFERED_BYTES) and the replay's sockets (nothing read for REPLAY_WS_WRITE_TIMEOUT_MS). One code, 4009, for
 * both; the reason says after `slow consumer:` which limit the client passed (docs/websockets.md, docs/replay.md).
 */
export function slowConsumerClose<D extends string>(detail: D): { code: 4009; reason: `slow consumer: ${D}` } {
  return { code: 4009, reason: `slow consumer: ${detail}` };
}
