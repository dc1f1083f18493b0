import { GateClosedError, QueryGate } from './query-gate';

const tick = () => new Promise((r) => setImmediate(r));

describe('QueryGate', () => {
  it('lets `limit` queries through at once and the rest in arrival order', async () => {
    const gate = new QueryGate(2);
    const signal = new AbortController().signal;
    const order: number[] = [];
    const releases: (() => void)[] = [];
    const waits = [1, 2, 3, 4, 5].map((n) =>
      gate.acquire(signal).then((release) => {
        order.push(n);
        releases.push(release);
      }),
    );
    await tick();
    expect(order).toEqual([1, 2]);
    expect(gate.waiting).toBe(3);
    releases[1]?.();
    await tick();
    expect(order).toEqual([1, 2, 3]);
    releases[0]?.();
    releases[2]?.();
    await tick();
    expect(order).toEqual([1, 2, 3, 4, 5]);
    expect(gate.waiting).toBe(0);
    await Promise.all(waits);
  });

  it("puts a request's next query ahead of queries of requests that have not started, behind earlier ones", async () => {
    const gate = new QueryGate(1);
    const signal = new AbortController().signal;
    const order: string[] = [];
    const releases: (() => void)[] = [];
    const take = (name: string, continuation = false) =>
      gate.acquire(signal, continuation).then((release) => {
        order.push(name);
        releases.push(release);
      });
    const waits = [take('a'), take('b'), take('c'), take('a2', true), take('b2', true), take('d')];
    await tick();
    expect(order).toEqual(['a']);
    for (let i = 0; i < 5; i++) {
      releases[i]?.();
      await tick();
    }
    expect(order).toEqual(['a', 'a2', 'b2', 'b', 'c', 'd']);
    releases[5]?.();
    await Promise.all(waits);
    expect(gate.waiting).toBe(0);
  });

  it('a release counts once, however often it is called', async () => {
    const gate = new QueryGate(1);
    const signal = new AbortController().signal;
    const first = await gate.acquire(signal);
    let second = false;
    let third = false;
    void gate.acquire(signal).then(() => (second = true));
    void gate.acquire(signal).then(() => (third = true));
    first();
    first();
    await tick();
    expect([second, third]).toEqual([true, false]);
  });

  it('a query whose request is aborted while waiting leaves the queue and never takes a place', async () => {
    const gate = new QueryGate(1);
    const release = await gate.acquire(new AbortController().signal);
    const aborted = new AbortController();
    const gone = gate.acquire(aborted.signal);
    let next = false;
    void gate.acquire(new AbortController().signal).then(() => (next = true));
    expect(gate.waiting).toBe(2);
    aborted.abort();
    await expect(gone).rejects.toBeInstanceOf(GateClosedError);
    expect(gate.waiting).toBe(1);
    release();
    await tick();
    expect(next).toBe(true);
    // An already aborted request is refused at once.
    await expect(gate.acquire(aborted.signal)).rejects.toBeInstanceOf(GateClosedError);
  });

  it('keeps its order over many queries (the queue compacts itself)', async () => {
    const gate = new QueryGate(3);
    const signal = new AbortController().signal;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 5000 }, (_, n) =>
        gate.acquire(signal).then(async (release) => {
          order.push(n);
          await tick();
          release();
        }),
      ),
    );
    expect(order).toEqual(Array.from({ length: 5000 }, (_, n) => n));
    expect(gate.waiting).toBe(0);
  });
});
