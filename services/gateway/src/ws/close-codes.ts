import { KEY_IN_MESSAGE_CLOSE } from '@depthgate/auth';
import { slowConsumerClose, TOO_MANY_MESSAGES_CLOSE } from '@depthgate/feeds';

/**
 * Every close code the gateway's WebSocket proxy uses, with its reason text: one table, documented in
 * docs/websockets.md ("Refusals and close codes") and the AsyncAPI document. RFC 6455 codes where one fits; the
 * 4000-4999 range (private use) otherwise, numbered after the HTTP status they correspond to.
 */
export const CLOSE = {
  /** The gateway is shutting down (drain): reconnect, another replica answers. */
  goingAway: { code: 1001, reason: 'gateway shutting down' },
  /** A binary frame: every platform's protocol is JSON text. */
  unsupportedData: { code: 1003, reason: 'binary frames are not accepted' },
  /** A client message larger than WS_MAX_MESSAGE_BYTES (the WebSocket library's own code and text). */
  tooBig: { code: 1009, reason: 'Max payload size exceeded' },
  /** An unexpected failure of the gateway. */
  internal: { code: 1011, reason: 'internal error' },
  /** The key was revoked (or is no longer valid) while the connection was open. */
  revoked: { code: 4001, reason: 'API key revoked' },
  /** The client stopped answering pings. */
  unresponsive: { code: 4008, reason: 'no pong within the ping interval' },
  /** The client does not read fast enough: its send buffer passed WS_MAX_BUFFERED_BYTES. */
  slowConsumer: slowConsumerClose('send buffer above the limit'),
  /**
   * A client message carrying an API key (carriesApiKey, a JSON string's escapes too): what the client sends may
   * reach the upstream (its markets, its ids), so the message is handled no further; as REST's 400 for a key in a
   * path, query or body.
   */
  keyInMessage: KEY_IN_MESSAGE_CLOSE,
  /** More messages than WS_CLIENT_MESSAGES_PER_SECOND allows (MessageRate). */
  tooManyMessages: TOO_MANY_MESSAGES_CLOSE,
} as const;
