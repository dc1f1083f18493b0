/**
 * The WebSocket proxy as an AsyncAPI 3.0 document (`GET /asyncapi.json`), generated from the stream modules (their
 * paths, channels and message examples), the close codes and the handshake's errors, so it cannot drift from them.
 */
import type { GatewayPlatforms } from '../platforms/registry';
import { CLOSE } from './close-codes';
import { STREAMS } from './registry';
import { RESYNC_REASONS, type StreamModule } from './types';

const HANDSHAKE_ERRORS: [number, string, string][] = [
  [400, 'invalid_request', 'not a WebSocket upgrade; a key offered as a subprotocol without "depthgate"'],
  [400, 'invalid_path', 'a malformed path'],
  [401, 'unauthorized', 'the key missing, unknown or revoked ("Invalid API key")'],
  [403, 'forbidden', 'the key’s platform allowlist excludes the platform'],
  [404, 'unknown_platform', 'not a platform, or a platform without a stream'],
  [404, 'unknown_channel', '`/ws/{platform}/{channel}` with a channel the platform does not have'],
  [404, 'not_found', 'another path after `/ws/v1/{platform}` than the platform’s own'],
  [429, 'too_many_connections', 'the key holds WS_MAX_CONNECTIONS_PER_KEY (or its own limit) connections'],
  [
    429,
    'rate_limited',
    'the key’s requests per minute are used up (a handshake counts as a request), or the client address presented too many unknown keys; Retry-After',
  ],
  [503, 'upstream_unavailable', 'the platform is disabled, needs credentials the gateway lacks, or the gateway drains'],
  [503, 'service_unavailable', 'keys cannot be verified (Redis down, key never seen), or the process is full'],
];

export function asyncApiDocument(platforms: GatewayPlatforms): object {
  const channels: Record<string, object> = {};
  const operations: Record<string, object> = {};
  const messages: Record<string, object> = {};
  for (const [key, module] of Object.entries(STREAMS) as [string, StreamModule][]) {
    const platform = platforms.byKey[key];
    if (!platform) continue;
    const aliases = Object.entries(platforms.aliases)
      .filter(([, k]) => k === key)
      .map(([a]) => a);
    const refs = (list: typeof module.docs.send, direction: string) =>
      Object.fromEntries(
        list.map((m) => {
          const id = `${key}.${direction}.${m.name}`;
          messages[id] = {
            name: m.name,
            summary: m.summary,
            payload: m.payload ?? {},
            examples: [m.example, ...(m.more ?? [])].map((payload) => ({ payload })),
          };
          return [m.name.replace(/[^A-Za-z0-9_]/g, '_'), { $ref: `#/components/messages/${id}` }];
        }),
      );
    const send = refs(module.docs.send, 'send');
    const receive = refs(module.docs.receive, 'receive');
    channels[key] = {
      address: `/ws/v1/${key}`,
      title: platform.title,
      description:
        `${platform.title}'s own protocol (${platform.docs}). Also at /ws/v1/{${[key, ...aliases].join('|')}}` +
        `${module.paths.map((p) => ` and /ws/v1/${key}${p === '/' ? '/' : p}`).join('')}, ` +
        `/ws/${key}/{${module.channels.join('|')}} (that channel only), and, with GATEWAY_BASE_DOMAIN, ` +
        `${key}.{domain}${module.paths.join(' or ')}. Upstream limits: ${module.limits.source}.`,
      messages: { ...send, ...receive },
    };
    operations[`${key}.send`] = {
      action: 'receive',
      channel: { $ref: `#/channels/${key}` },
      summary: 'What a client sends (the gateway receives)',
      messages: Object.keys(send).map((m) => ({ $ref: `#/channels/${key}/messages/${m}` })),
    };
    operations[`${key}.receive`] = {
      action: 'send',
      channel: { $ref: `#/channels/${key}` },
      summary: 'What a client receives',
      messages: Object.keys(receive).map((m) => ({ $ref: `#/channels/${key}/messages/${m}` })),
    };
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'depthgate WebSocket proxy',
      version: '1.0.0',
      description:
        'Each platform’s own WebSocket protocol through one depthgate key: existing client code works by changing ' +
        'its URL. Identical subscriptions of many clients share one upstream subscription per platform, channel and ' +
        'market; a client joining late gets the platform’s snapshot first. On an upstream disconnect, stall, ' +
        'sequence gap or a kept book that disagrees with the platform’s REST book, every affected client gets the ' +
        `gateway’s notice (reasons: ${RESYNC_REASONS.join(', ')}) and then a fresh snapshot in the platform’s form. ` +
        'Handshake refusals are HTTP statuses with the gateway’s JSON error body (x-handshake-errors); the ' +
        'connection’s own ends are close codes (x-close-codes).',
      'x-handshake-errors': HANDSHAKE_ERRORS.map(([status, error, when]) => ({ status, error, when })),
      'x-close-codes': Object.values(CLOSE).map(({ code, reason }) => ({ code, reason })),
    },
    servers: {
      gateway: { host: '{gateway}', protocol: 'ws', description: 'The gateway (wss behind TLS)' },
    },
    defaultContentType: 'application/json',
    channels,
    operations,
    components: {
      messages,
      securitySchemes: {
        apiKeyHeader: { type: 'httpApiKey', name: 'X-API-Key', in: 'header' },
        basic: { type: 'userPassword', description: 'HTTP Basic with the key as the user name' },
        apiKeyQuery: { type: 'httpApiKey', name: 'api_key', in: 'query', description: 'Masked in every log' },
        subprotocol: {
          type: 'httpApiKey',
          name: 'Sec-WebSocket-Protocol',
          in: 'header',
          description: 'For browsers: offer ["depthgate", "dg_…"]; the gateway answers "depthgate"',
        },
      },
    },
  };
}
