/**
 * @depthgate/replay: recorded order-book history replayed through each venue's own protocol (issue 25): the engine
 * (README.md), the source that reads a ticker's window from ClickHouse, and the deployable (main.ts) serving the HTTP
 * replay; the WebSocket server comes next.
 */
export * from './engine';
export { readWindow, SourceError, WindowTooLargeError, type WindowSpec } from './source';
export { createApp, createReplayService, type ReplayDeps } from './app';
export { loadConfig, replayEnvSchema, type ReplayConfig } from './config';
