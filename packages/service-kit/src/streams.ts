import type { EventEmitter } from 'node:events';

/**
 * Settles when a writable (a response, a socket) has sent what it held (`drain`) or has closed (its reader went away):
 * a writer that waits for it never waits forever. Both listeners are removed either way. Wait only after a write said
 * to (returned false, or `writableNeedDrain`): otherwise no `drain` is due.
 */
export function drained(stream: EventEmitter): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}
