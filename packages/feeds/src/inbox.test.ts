import { SerialInbox } from './inbox';

/** A socket that records pause/resume. */
function socket() {
  const s = { isPaused: false, log: [] as string[] };
  return Object.assign(s, {
    pause: () => {
      s.isPaused = true;
      s.log.push('pause');
    },
    resume: () => {
      s.isPaused = false;
      s.log.push('resume');
    },
  });
}

/** A task that finishes when `release()` is called. */
function gate() {
  let release = () => undefined as void;
  const done = new Promise<void>((r) => (release = r));
  return { done, release: () => release() };
}

describe('SerialInbox', () => {
  it('runs tasks one at a time, in order, each after the one before settled', async () => {
    const ran: string[] = [];
    const inbox = new SerialInbox(socket(), 10, () => undefined);
    const first = gate();
    inbox.push(async () => {
      ran.push('a start');
      await first.done;
      ran.push('a end');
    });
    inbox.push(() => ran.push('b'));
    await Promise.resolve();
    expect(ran).toEqual(['a start']);
    first.release();
    await inbox.settled;
    expect(ran).toEqual(['a start', 'a end', 'b']);
  });

  it('pauses the socket at maxPending waiting and resumes it when half are done', async () => {
    const s = socket();
    const inbox = new SerialInbox(s, 4, () => undefined);
    const gates = Array.from({ length: 4 }, () => gate());
    for (const g of gates) inbox.push(() => g.done);
    expect(s.log).toEqual(['pause']);
    gates[0]?.release();
    await gates[0]?.done;
    await new Promise((r) => setImmediate(r));
    // 3 waiting: above half of 4, still paused.
    expect(s.log).toEqual(['pause']);
    gates[1]?.release();
    await new Promise((r) => setImmediate(r));
    expect(s.log).toEqual(['pause', 'resume']);
    for (const g of gates) g.release();
    await inbox.settled;
    expect(s.isPaused).toBe(false);
  });

  it('passes a task that throws or rejects to onError and runs the next', async () => {
    const errors: string[] = [];
    const ran: string[] = [];
    const inbox = new SerialInbox(socket(), 10, (err) => errors.push((err as Error).message));
    inbox.push(() => {
      throw new Error('sync');
    });
    inbox.push(() => Promise.reject(new Error('async')));
    inbox.push(() => ran.push('after'));
    await inbox.settled;
    expect(errors).toEqual(['sync', 'async']);
    expect(ran).toEqual(['after']);
  });
});
