/**
 * @depthgate/replay: recorded order-book history replayed through each venue's own WebSocket protocol (issue 25).
 * So far the engine (README.md); the socket server, the HTTP stream and the ClickHouse source come next.
 */
export * from './engine';
export { readWindow, SourceError, type WindowSpec } from './source';
