import type { CacheStatus } from './proxy/shared-response';

/** What the gateway learns about a request while serving it (for metrics and the access log). */
declare module 'node:http' {
  interface IncomingMessage {
    platform?: string;
    cacheStatus?: CacheStatus;
  }
}

export {};
