/**
 * @depthgate/feeds: what every consumer of the platforms' WebSocket feeds shares — exact decimal arithmetic on the
 * venues' strings, the level book, a resilient feed connection, and reading its JSON messages. The recorder (services/recorder) and the
 * gateway's WebSocket proxy (services/gateway/src/ws) both import it; it imports nothing of the project.
 */
export * from './book';
export * from './decimal';
export * from './message';
export * from './socket';
export * from './clob-hash';
