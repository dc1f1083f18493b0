/**
 * @depthgate/order-books: what every keeper of a platform's order book shares — exact decimal arithmetic on the
 * venues' strings and the level book. The recorder (services/recorder) and the gateway's WebSocket proxy
 * (services/gateway/src/ws) both import it; it imports nothing of theirs, nor any I/O.
 */
export * from './book';
export * from './decimal';
