import { RefusedKeys } from './refused-keys';

describe('RefusedKeys', () => {
  it('counts an address’s refused keys in a window: at the limit it waits until the window ends, then starts again', () => {
    let now = 0;
    const r = new RefusedKeys(2, { windowMs: 60_000, now: () => now });
    expect(r.waitMs('203.0.113.9')).toBe(0);
    r.begin('203.0.113.9');
    now = 10_000;
    expect(r.waitMs('203.0.113.9')).toBe(0);
    r.begin('203.0.113.9');
    expect(r.waitMs('203.0.113.9')).toBe(50_000);
    expect(r.waitMs('::ffff:203.0.113.9')).toBe(50_000);
    expect(r.waitMs('203.0.113.10')).toBe(0);
    now = 60_000;
    expect(r.waitMs('203.0.113.9')).toBe(0);
    r.begin('203.0.113.9');
    expect(r.waitMs('203.0.113.9')).toBe(0);
  });

  it('a lookup that did not end unknown is given back (in its own window only)', () => {
    let now = 0;
    const r = new RefusedKeys(1, { windowMs: 60_000, now: () => now });
    const a = r.begin('203.0.113.9');
    expect(r.waitMs('203.0.113.9')).toBe(60_000);
    r.end(a, false);
    expect(r.waitMs('203.0.113.9')).toBe(0);
    const b = r.begin('203.0.113.9');
    now = 60_000;
    const c = r.begin('203.0.113.9'); // a new window
    r.end(b, false); // gives back in the old window, not the new one
    expect(r.waitMs('203.0.113.9')).toBe(60_000);
    r.end(c, true);
    expect(r.waitMs('203.0.113.9')).toBe(60_000);
  });

  it('0 is no limit', () => {
    const r = new RefusedKeys(0);
    for (let i = 0; i < 100; i++) r.begin('203.0.113.9');
    expect(r.waitMs('203.0.113.9')).toBe(0);
    expect(r.size).toBe(0);
  });

  it('holds at most maxAddresses: ended windows leave first, then the oldest', () => {
    let now = 0;
    const r = new RefusedKeys(1, { windowMs: 1000, maxAddresses: 3, now: () => now });
    r.begin('10.0.0.1');
    now = 500;
    r.begin('10.0.0.2');
    r.begin('10.0.0.3');
    now = 1200; // 10.0.0.1's window has ended
    r.begin('10.0.0.4');
    expect(r.size).toBe(3);
    expect(r.waitMs('10.0.0.2')).toBe(300);
    r.begin('10.0.0.5'); // none ended: the oldest (10.0.0.2) leaves
    expect(r.size).toBe(3);
    expect(r.waitMs('10.0.0.2')).toBe(0);
    expect(r.waitMs('10.0.0.3')).toBe(300);
    for (let i = 0; i < 1000; i++) r.begin(`2001:db8:${i.toString(16)}::1`);
    expect(r.size).toBe(3);
  });
});
