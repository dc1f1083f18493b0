import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { repoRoot } from './index';

// infra/local/lib.sh, which ./dev and the infra/local scripts use to start and stop the local databases.
const lib = path.join(repoRoot, 'infra', 'local', 'lib.sh');

describe('dg_spawn (infra/local/lib.sh)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'dg-lib-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("returns only once the child has exec'd its command, so a starting server is never taken for a dead one", () => {
    // The child's command line lacks the signature ("sleep 11") until it execs, as a forked shell's does: here the
    // exec comes half a second late, standing in for a loaded machine. dg_alive right after dg_spawn must find it.
    // (The signature is put together at run time: this script's own text, which the child has until its first exec,
    // must not hold it.)
    const script = `
      source "$LIB"
      sig="sl""eep 11"
      dg_spawn "$DIR/p.pid" "$DIR/p.log" "$sig" bash -c 'sleep 0.5; exec sleep "$0$0"' 1
      if dg_alive "$DIR/p.pid"; then echo alive; else echo dead; fi
      tr '\\0' ' ' < "/proc/$(dg_pid_of "$DIR/p.pid")/cmdline"; echo
      dg_stop "$DIR/p.pid" 5
      if dg_alive "$DIR/p.pid"; then echo still-running; else echo stopped; fi`;
    const out = execFileSync('bash', ['-c', script], { env: { ...process.env, LIB: lib, DIR: dir }, encoding: 'utf8' });
    expect(out.trim().split('\n')).toEqual(['alive', 'sleep 11 ', 'stopped']);
  });

  it('returns when the child dies before it execs', () => {
    const script = `
      source "$LIB"
      dg_spawn "$DIR/p.pid" "$DIR/p.log" "never-here" bash -c 'exit 3'
      if dg_alive "$DIR/p.pid"; then echo alive; else echo dead; fi`;
    const out = execFileSync('bash', ['-c', script], { env: { ...process.env, LIB: lib, DIR: dir }, encoding: 'utf8' });
    expect(out.trim()).toBe('dead');
  });
});
