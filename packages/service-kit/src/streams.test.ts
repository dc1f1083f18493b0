import { EventEmitter } from 'node:events';
import { drained } from './streams';

describe('drained', () => {
  it.each(['drain', 'close'])('settles on %s and leaves no listener behind', async (event) => {
    const stream = new EventEmitter();
    let settled = false;
    const wait = drained(stream).then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    stream.emit(event);
    await wait;
    expect(settled).toBe(true);
    expect(stream.listenerCount('drain') + stream.listenerCount('close')).toBe(0);
  });
});

describe('drained with a wake signal', () => {
  it('settles when woken, and leaves no listener behind', async () => {
    const stream = new EventEmitter();
    const wake = new AbortController();
    const wait = drained(stream, wake.signal);
    wake.abort();
    await wait;
    expect(stream.listenerCount('drain') + stream.listenerCount('close')).toBe(0);
  });
});
