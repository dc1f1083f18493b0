/**
 * @depthgate/feeds: what every consumer and every speaker of the platforms' WebSocket feeds shares — exact decimal
 * arithmetic on the venues' strings, the level book, a resilient feed connection, reading its JSON messages, and
 * writing each venue's messages (wire/). The recorder (services/recorder) and the gateway's WebSocket proxy
 * (services/gateway/src/ws) read feeds with it; the venue simulator (packages/venue-sim) and the replay engine
 * (services/replay) write them with it. It imports nothing of the project.
 */
export * from './book';
export * from './decimal';
export * from './inbox';
export * from './message-rate';
export * from './slow-consumer';
export * from './message';
export * from './socket';
export * from './clob-hash';
export * from './wire';
