import type { NativeMessage } from '../engine';
import { Session, Sessions, type SessionMember, type SessionStream } from './session';

const terms = { from: 0, to: 100, speed: 'max' as const, clock: 'ts' as const };

function stream(name: string, times: number[]): SessionStream {
  return { messages: times.map((ts) => ({ ts, received_ts: ts, text: `${name}@${ts}` }))[Symbol.iterator]() };
}

class Member implements SessionMember {
  finishedWith: number | undefined;
  failure: Error | undefined;
  left = false;
  constructor(
    private readonly log: string[],
    private readonly hold?: () => Promise<void>,
  ) {}
  corks = 0;
  send(text: string): number | Promise<number> {
    this.log.push(text);
    const held = this.hold?.();
    return held ? held.then(() => text.length) : text.length;
  }
  cork(): void {
    this.corks++;
  }
  uncork(): void {
    this.corks--;
  }
  gone(): boolean {
    return this.left;
  }
  finished(sent: number): void {
    this.finishedWith = sent;
  }
  failed(err: Error): void {
    this.failure = err;
  }
}

const until = async (p: () => boolean) => {
  for (let i = 0; i < 1000 && !p(); i++) await new Promise((r) => setTimeout(r, 1));
  expect(p()).toBe(true);
};

describe('Session', () => {
  it('merges every member’s streams into one time order (ties in join order) and finishes each', async () => {
    const log: string[] = [];
    let ended = 0;
    const s = new Session(terms, 0, () => ended++);
    const a = new Member(log);
    const b = new Member(log);
    s.join(a, terms);
    s.join(b, terms);
    s.ready(a, [stream('a1', [1, 5, 9]), stream('a2', [2, 5])]);
    expect(s.isStarted).toBe(false);
    s.ready(b, [stream('b', [0, 5, 7, 50])]);
    await until(() => ended === 1);
    expect(log).toEqual(['b@0', 'a1@1', 'a2@2', 'a1@5', 'a2@5', 'b@5', 'b@7', 'a1@9', 'b@50']);
    expect([a.finishedWith, b.finishedWith]).toEqual([5, 4]);
    // Every cork was undone (the batch written) by the end.
    expect([a.corks, b.corks]).toEqual([0, 0]);
  });

  it('waits for every member that joined; a member that leaves is no longer waited for, nor sent to', async () => {
    const log: string[] = [];
    let ended = 0;
    const s = new Session(terms, 0, () => ended++);
    const a = new Member(log);
    const b = new Member(log);
    s.join(a, terms);
    s.join(b, terms);
    s.ready(a, [stream('a', [1, 2])]);
    await new Promise((r) => setTimeout(r, 5));
    expect(s.isStarted).toBe(false);
    b.left = true;
    s.leave(b);
    await until(() => ended === 1);
    expect(log).toEqual(['a@1', 'a@2']);
    expect(b.finishedWith).toBeUndefined();
  });

  it('a slow member holds the whole session (true order), and the rest follows when it drains', async () => {
    const log: string[] = [];
    let release: () => void = () => {};
    const s = new Session(terms, 0, () => {});
    const slow = new Member(log, () => new Promise<void>((r) => (release = r)));
    const fast = new Member(log);
    s.join(slow, terms);
    s.join(fast, terms);
    s.ready(slow, [stream('slow', [1])]);
    s.ready(fast, [stream('fast', [2, 3])]);
    await until(() => log.length === 1);
    await new Promise((r) => setTimeout(r, 5));
    expect(log).toEqual(['slow@1']);
    release();
    await until(() => fast.finishedWith === 2);
    expect(log).toEqual(['slow@1', 'fast@2', 'fast@3']);
  });

  it('refuses a member of other terms, and any member once started', async () => {
    const s = new Session(terms, 0, () => {});
    expect(() => s.join(new Member([]), { ...terms, to: 99 })).toThrow(/same from, to, speed and clock/);
    const a = new Member([]);
    s.join(a, terms);
    s.ready(a, [stream('a', [1])]);
    await until(() => s.isStarted);
    expect(() => s.join(new Member([]), terms)).toThrow(/has started/);
  });

  it('a stream whose rows contradict themselves fails every member still there', async () => {
    const s = new Session(terms, 0, () => {});
    const a = new Member([]);
    const b = new Member([]);
    s.join(a, terms);
    s.join(b, terms);
    const broken: Iterator<NativeMessage> = {
      next: () => {
        throw new Error('a delta takes a level below zero');
      },
    };
    s.ready(a, [{ messages: broken }]);
    s.ready(b, [stream('b', [1])]);
    await until(() => a.failure !== undefined && b.failure !== undefined);
    expect(a.failure?.message).toContain('below zero');
  });
});

describe('Sessions', () => {
  it('one session per caller and name; a name of another caller is another session; no name, a session of one', () => {
    const sessions = new Sessions(10);
    const s = sessions.session('key:1', 'x', terms);
    expect(sessions.session('key:1', 'x', terms)).toBe(s);
    expect(sessions.session('key:2', 'x', terms)).not.toBe(s);
    expect(sessions.session('key:1', undefined, terms)).not.toBe(sessions.session('key:1', undefined, terms));
    expect(sessions.size).toBe(2);
  });

  it('forgets a named session whose only admitted socket gave up before joining (its upgrade failed)', () => {
    const sessions = new Sessions(10);
    const s = sessions.session('key:1', 'x', terms);
    const place = s.reserve(terms);
    expect(sessions.size).toBe(1);
    s.release(place);
    s.release(place); // once only
    expect(sessions.size).toBe(0);
    // The name is free again, on other terms too.
    const other = { ...terms, to: 50 };
    const again = sessions.session('key:1', 'x', other);
    expect(again).not.toBe(s);
    expect(() => again.reserve(other)).not.toThrow();
  });

  it('keeps a session while a socket admitted to it is still upgrading, and after it joined', () => {
    const sessions = new Sessions(10);
    const s = sessions.session('key:1', 'x', terms);
    const [p1, p2] = [s.reserve(terms), s.reserve(terms)];
    const a = new Member([]);
    s.join(a, terms);
    s.release(p1);
    a.left = true;
    s.leave(a); // every member has left, but p2 is still upgrading
    expect(sessions.size).toBe(1);
    const b = new Member([]);
    s.join(b, terms);
    s.release(p2);
    expect(sessions.size).toBe(1);
    b.left = true;
    s.leave(b);
    expect(sessions.size).toBe(0);
  });
});
