import type { GatewayPlatforms } from './platforms/registry';
import type { Platform } from './platforms/types';

const error = (description: string, example: { error: string; message: string }) => ({
  description,
  headers: { 'X-Request-Id': { $ref: '#/components/headers/XRequestId' } },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, example } },
});

/** The spec's gateway table, with what each call is forwarded to. */
const SPEC_ENDPOINTS: [string, string][] = [
  ['/api/v1/venue-b/search/filters', 'Kalshi sports filters (→ /search/filters_by_sport)'],
  ['/api/v1/venue-b/historical/cutoff-timestamps', 'Kalshi historical cutoff timestamps (→ /historical/cutoff)'],
  ['/api/v1/venue-b/exchange/announcements', 'Kalshi exchange announcements'],
  ['/api/v1/venue-b/events/multivariate', 'Kalshi multivariate events'],
  ['/api/v1/venue-b/structured-targets', 'Kalshi structured targets (→ /structured_targets)'],
  ['/api/v1/venue-b/incentive-programs', 'Kalshi incentive programs (→ /incentive_programs)'],
  [
    '/api/v1/venue-a-us/events',
    'Polymarket US events, paginated; every filter passes (limit, offset, active, closed, archived, featured, slug, tagSlug, categories, seriesId, startDateMin/Max, endDateMin/Max, liquidityMin/Max, volumeMin/Max, live, orderBy, orderDirection)',
  ],
  ['/api/v1/venue-a-us/sports', 'Polymarket US sports metadata (legacy endpoint)'],
  ['/api/v1/venue-a-us/sports/teams', 'Polymarket US sports teams'],
  ['/api/v1/venue-d/currencies', 'Coinbase Exchange currencies (a JSON array)'],
  ['/api/v1/venue-d/time', 'Coinbase Exchange server time ({iso, epoch})'],
  [
    '/api/v1/venue-e/trsrv/event/category-tree',
    'IBKR event-contract category tree (needs the Client Portal gateway running)',
  ],
];

/**
 * The read-only POST paths of a platform as callers write them (`/api/v1/{key}{path}`): each target's POST paths,
 * kept where routing that path leads back to it (true of every route module's today; a check, not an assumption).
 */
function postPaths(platform: Platform): string[] {
  const out: string[] = [];
  for (const target of platform.targets) {
    for (const path of target.post ?? []) {
      const segments = path.split('/').slice(1);
      const route = platform.route({ segments, path }, '');
      if (route.target === target && route.path === path) out.push(`/api/v1/${platform.key}${path}`);
    }
  }
  return out;
}

export function openApiDocument(platforms: GatewayPlatforms): object {
  const { aliases } = platforms;
  const passThrough = {
    description:
      'The upstream answer: its status, body and content headers, byte for byte (compressed bodies stay compressed).',
    headers: {
      'X-Request-Id': { $ref: '#/components/headers/XRequestId' },
      'X-Cache': { $ref: '#/components/headers/XCache' },
      RateLimit: { $ref: '#/components/headers/RateLimit' },
      'RateLimit-Policy': { $ref: '#/components/headers/RateLimitPolicy' },
    },
    content: { 'application/json': { schema: {} } },
  };
  const errors = {
    '400': error(
      'Invalid path (dot segments, encoded slashes or backslashes, `//`, control characters, malformed escapes) or query; nothing reaches an upstream',
      { error: 'invalid_path', message: 'Invalid path: dot segments are not allowed' },
    ),
    '401': error('The key (X-API-Key, or HTTP Basic with the key as user name) missing, unknown or revoked', {
      error: 'unauthorized',
      message: 'Invalid API key',
    }),
    '403': error('The key is limited to other platforms', {
      error: 'forbidden',
      message: 'This API key may not use platform venue-b',
    }),
    '404': error('Unknown platform (the message lists the valid keys)', {
      error: 'unknown_platform',
      message: `Unknown platform "x"; valid platforms: ${platforms.keys.join(', ')}`,
    }),
    '405': error(
      'A method the path does not take: GET and HEAD everywhere, POST only on the read-only POST paths (the Allow header says which)',
      { error: 'method_not_allowed', message: 'PUT is not forwarded for this path; it accepts GET, HEAD' },
    ),
    '429': error(
      '`rate_limited`: the caller exceeded its key rate limit (RateLimit, RateLimit-Policy, Retry-After headers). `upstream_rate_limited`: the upstream budget is exhausted (Retry-After). An upstream 429 passes through as it is.',
      { error: 'rate_limited', message: 'Rate limit exceeded: 600 requests per minute; retry in 12 s' },
    ),
    '502': error(
      '`bad_gateway`: the upstream refused or reset the connection, could not be resolved, failed TLS, or did not answer within the timeout. Upstream 4xx/5xx answers are passed through with their own status and body instead.',
      { error: 'bad_gateway', message: 'Upstream api.elections.kalshi.com did not answer within 10000 ms' },
    ),
    '503': error(
      '`upstream_unavailable`: the platform is disabled, its circuit is open after repeated failures (Retry-After), or the IBKR Client Portal gateway is not running. `service_unavailable`: API keys cannot be verified (Redis unreachable and the key not cached).',
      { error: 'upstream_unavailable', message: 'Kalshi is failing; requests are paused for 8 s' },
    ),
  };
  const operation = (summary: string) => ({
    summary,
    responses: { '200': passThrough, ...errors },
  });
  const postOperation = (summary: string) => ({
    summary,
    requestBody: {
      required: true,
      description: 'Forwarded byte for byte with its Content-Type; signed where the platform signs bodies',
      content: { 'application/json': { schema: {} } },
    },
    responses: {
      '200': passThrough,
      ...errors,
      '413': error('The body is larger than GATEWAY_MAX_BODY_BYTES (the connection is closed)', {
        error: 'payload_too_large',
        message: 'The request body is larger than 262144 bytes',
      }),
      '415': error('The body is not JSON: Content-Type not application/json or +json, not UTF-8, or not parseable', {
        error: 'unsupported_media_type',
        message: 'The request body is not JSON (UTF-8)',
      }),
    },
  });
  const platformParam = {
    name: 'platform',
    in: 'path',
    required: true,
    description: `Neutral platform key; real names are accepted as aliases (${Object.entries(aliases)
      .map(([alias, key]) => `${alias} → ${key}`)
      .join(', ')}).`,
    schema: { type: 'string', enum: [...platforms.keys, ...Object.keys(aliases)] },
  };
  const paths: Record<string, object> = {
    '/health': {
      get: {
        summary: 'Liveness',
        security: [],
        responses: {
          '200': {
            description: 'Up',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Health' } } },
          },
        },
      },
    },
    '/ready': {
      get: {
        summary: 'Readiness: Redis reachable and not draining',
        security: [],
        responses: { '200': { description: 'Ready' }, '503': { description: 'Not ready' } },
      },
    },
    '/metrics': {
      get: {
        summary: 'Prometheus metrics',
        security: [],
        responses: { '200': { description: 'Metrics in the Prometheus text format' } },
      },
    },
    '/openapi.json': {
      get: { summary: 'This document', security: [], responses: { '200': { description: 'OpenAPI 3.1' } } },
    },
    '/api/v1/{platform}/{resource}': {
      parameters: [
        platformParam,
        {
          name: 'resource',
          in: 'path',
          required: true,
          description: 'The platform-specific path forwarded upstream (may contain slashes).',
          schema: { type: 'string' },
        },
      ],
      get: operation('Forward a GET to the platform named in the path'),
      head: operation('Forward a HEAD'),
    },
    '/api/v1/{platform}/': {
      parameters: [platformParam],
      get: operation('Forward a GET to the platform’s root, `/` (e.g. the CLOB’s health answer)'),
      head: operation('Forward a HEAD to the platform’s root'),
    },
  };
  for (const [path, summary] of SPEC_ENDPOINTS) paths[path] = { get: operation(summary) };
  for (const platform of Object.values(platforms.byKey)) {
    for (const path of postPaths(platform)) {
      paths[path] = {
        get: operation(`Forward a GET to ${platform.title}`),
        head: operation('Forward a HEAD'),
        post: postOperation(`Forward a read-only POST (JSON body) to ${platform.title}`),
      };
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'depthgate gateway',
      version: '1.0.0',
      description:
        'One entry point to seven market platforms. The gateway authenticates to each upstream itself; callers send only their ' +
        'depthgate key, as X-API-Key or as HTTP Basic (the key as user name, password empty). ' +
        'With GATEWAY_BASE_DOMAIN set, a request to host {platform}.{GATEWAY_BASE_DOMAIN} is routed to that platform with its ' +
        'whole path as the resource (/v1/events there is /api/v1/{platform}/v1/events here). ' +
        'Platforms: ' +
        Object.values(platforms.byKey)
          .map((p) => `${p.key} (${p.title})`)
          .join(', ') +
        '.',
    },
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        basic: {
          type: 'http',
          scheme: 'basic',
          description:
            'The key as the user name, password empty or ignored (a URL http://dg_…@host/…); X-API-Key wins when both are sent',
        },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['error', 'message'],
          properties: { error: { type: 'string', description: 'Error code' }, message: { type: 'string' } },
        },
        Health: { type: 'object', required: ['status'], properties: { status: { const: 'ok' } } },
      },
      headers: {
        XRequestId: {
          description: "The caller's X-Request-Id when well-formed, else a new UUID",
          schema: { type: 'string' },
        },
        XCache: {
          description: 'HIT (micro-cache), MISS (own upstream call) or COALESCED (shared an identical call in flight)',
          schema: { enum: ['HIT', 'MISS', 'COALESCED'] },
        },
        RateLimit: {
          description: 'IETF draft 7: limit, remaining and reset of the caller key budget',
          schema: { type: 'string' },
        },
        RateLimitPolicy: { description: 'IETF draft 7 policy, e.g. 600;w=60', schema: { type: 'string' } },
      },
    },
    security: [{ apiKey: [] }, { basic: [] }],
    paths,
  };
}
