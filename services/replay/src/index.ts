/**
 * @depthgate/replay: recorded order-book history replayed through each venue's own protocol (issue 25): the engine
 * (README.md), the source that reads a ticker's window from ClickHouse, and the deployable (main.ts) serving the HTTP
 * replay and the WebSocket replay (ws/: one protocol module per venue, one socket, sessions on one clock).
 */
export * from './engine';
export { openWindow, readWindow, SourceError, DEFAULT_PAGE_ROWS, type WindowSpec } from './source';
export { createApp, createReplayService, type ReplayDeps } from './app';
export { loadConfig, replayEnvSchema, type ReplayConfig } from './config';
export type { ReplayProtocol, VenueSocket, MarketStream, Frame, Refusal, SubscribeRequest } from './ws/protocol';
