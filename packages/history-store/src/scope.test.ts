import { newQueryId } from './connection';
import { QueryScope } from './scope';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('QueryScope', () => {
  it('counts its queries: the second and later are continuations', () => {
    const scope = new QueryScope(async () => undefined, 10_000);
    expect(scope.enter('a')).toBe(false);
    scope.leave('a');
    expect(scope.enter('b')).toBe(true);
    scope.dispose();
  });

  it('aborts at its budget and kills what runs, unless the answer has started', async () => {
    const killed: string[] = [];
    const kill = async (id: string) => void killed.push(id);
    const scope = new QueryScope(kill, 30);
    scope.enter('q1');
    await sleep(60);
    expect(scope.reason).toBe('timeout');
    expect(scope.signal.aborted).toBe(true);
    expect(killed).toEqual(['q1']);
    scope.dispose();

    const started = new QueryScope(kill, 30, () => true);
    started.enter('q2');
    await sleep(60);
    expect(started.aborted).toBe(false);
    expect(started.maxExecutionTimeSeconds()).toBe(1);
    started.dispose();
  });

  it('gives the server the rest of the budget in whole seconds, and the whole budget once the answer started', () => {
    let answering = false;
    const scope = new QueryScope(
      async () => undefined,
      2500,
      () => answering,
    );
    expect(scope.maxExecutionTimeSeconds()).toBe(3);
    answering = true;
    expect(scope.maxExecutionTimeSeconds()).toBe(3);
    scope.dispose();
  });

  it('keeps the first reason and kills only queries still running', () => {
    const killed: string[] = [];
    const scope = new QueryScope(async (id) => void killed.push(id), 10_000);
    scope.enter('done');
    scope.leave('done');
    scope.enter('running');
    scope.abort('cancelled');
    scope.abort('timeout');
    expect(scope.reason).toBe('cancelled');
    expect(killed).toEqual(['running']);
    scope.dispose();
  });
});

describe('newQueryId', () => {
  it('tags the id with the query name and refuses names that could not be read back', () => {
    expect(newQueryId('window')).toMatch(/^dg-window-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(newQueryId('insert-deltas')).not.toBe(newQueryId('insert-deltas'));
    for (const name of ['', 'Window', "x'y", 'a b', 'x'.repeat(41)]) expect(() => newQueryId(name)).toThrow(TypeError);
  });
});
