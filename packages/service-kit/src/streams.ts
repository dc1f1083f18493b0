import type { EventEmitter } from 'node:events';

/**
 * Settles when a writable (a response, a socket) has sent what it held (`drain`) or has closed (its reader went away),
 * or when `wake` aborts (the caller saw room by other means): a writer that waits for it never waits forever. Every
 * listener is removed either way. Wait only after a write said to (returned false, or `writableNeedDrain`): otherwise
 * no `drain` is due. Node emits `drain` once the buffer is empty, not when it falls below some bound.
 */
export function drained(stream: EventEmitter, wake?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      wake?.removeEventListener('abort', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
    wake?.addEventListener('abort', done);
  });
}
