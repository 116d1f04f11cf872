// Starting a worker's process (src/proc/start-process.ts): what the started program finds (its
// own session and group, stdin from /dev/null, only its three standard descriptors, default
// signals, exactly the environment and directory given) and how its end is told.
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readProcStat, startProcess, type ProcessEnd } from '../../src/proc/index.js';
import { tempDir } from '../helpers/daemon.js';
import { TEST_MARK } from '../helpers/procs.js';

const [markName, markValue] = TEST_MARK.split('=') as [string, string];
const ENV = { PATH: '/usr/bin:/bin', [markName]: markValue };

/** Runs `script` in sh to its end: how it ended and what it printed. */
async function run(script: string, env: Record<string, string> = ENV, cwd = '/') {
  const out = join(tempDir(), 'out');
  const fd = openSync(out, 'a');
  let started;
  try {
    started = startProcess({ file: '/bin/sh', args: ['-c', script], env, cwd, output: fd });
  } finally {
    closeSync(fd);
  }
  const end = await new Promise<ProcessEnd>((resolve) => started.onExit(resolve));
  return { pid: started.pid, end, output: readFileSync(out, 'utf8') };
}

describe('startProcess', () => {
  it('starts the program as the leader of a new session and group, and tells its exit status', async () => {
    // Fields 1, 5 and 6 of its stat: its pid, group and session (sh's comm has no space).
    const { pid, end, output } = await run('cut -d" " -f1,5,6 /proc/$$/stat | tr " " :; exit 7');
    expect(output.trim()).toBe(`${pid}:${pid}:${pid}`);
    expect(end).toEqual({ code: 7, signal: null });
  });

  it('gives it /dev/null for stdin, one output for stdout and stderr, and no other descriptor of the daemon', async () => {
    const { output } = await run(
      'readlink /proc/$$/fd/0; echo out; echo err >&2; ls /proc/$$/fd | tr "\\n" " "',
    );
    const lines = output.trim().split('\n');
    expect(lines.slice(0, 3)).toEqual(['/dev/null', 'out', 'err']);
    expect(lines[3]!.trim().split(' ').sort()).toEqual(['0', '1', '2']);
  });

  it('gives it exactly the environment and directory asked for, with no signal ignored or blocked', async () => {
    const cwd = tempDir();
    const { output } = await run(
      'pwd; env | sort | tr "\\n" " "; echo; grep -E "^Sig(Ign|Blk)" /proc/$$/status',
      { ...ENV, ONLY: 'this' },
      cwd,
    );
    const [dir, env, blocked, ignored] = output.trim().split('\n');
    expect(dir).toBe(cwd);
    // sh adds PWD (and on some shells OLDPWD) itself.
    expect(
      env!
        .trim()
        .split(' ')
        .filter((v) => !/^(PWD|OLDPWD)=/.test(v)),
    ).toEqual(
      Object.entries({ ...ENV, ONLY: 'this' })
        .map(([k, v]) => `${k}=${v}`)
        .sort(),
    );
    expect(ignored).toMatch(/^SigIgn:\s+0+$/);
    expect(blocked).toMatch(/^SigBlk:\s+0+$/);
  });

  it('tells the signal that ended it, and keeps it unreaped (its identity readable) until then', async () => {
    const out = join(tempDir(), 'out');
    const fd = openSync(out, 'a');
    const started = startProcess({
      file: '/bin/sh',
      args: ['-c', 'kill -USR1 $$'],
      env: ENV,
      cwd: '/',
      output: fd,
    });
    closeSync(fd);
    // Read in the same turn as the start: a zombie at worst, never another process.
    expect(readProcStat(started.pid)?.pid).toBe(started.pid);
    const end = await new Promise<ProcessEnd>((resolve) => started.onExit(resolve));
    expect(end).toEqual({ code: null, signal: 'SIGUSR1' });
    expect(readProcStat(started.pid)).toBeNull();
  });

  it('throws the errno when nothing can be started, and refuses a NUL byte', () => {
    const fd = openSync('/dev/null', 'a');
    const notExecutable = join(tempDir(), 'script');
    writeFileSync(notExecutable, '#!/bin/sh\n', { mode: 0o644 });
    try {
      const start =
        (file: string, args: string[], cwd = '/') =>
        () =>
          startProcess({ file, args, env: ENV, cwd, output: fd });
      expect(start('/no/such/program', [])).toThrow(expect.objectContaining({ code: 'ENOENT' }));
      expect(start(notExecutable, [])).toThrow(expect.objectContaining({ code: 'EACCES' }));
      expect(start('/bin/sh', ['-c', 'true'], '/no/such/dir')).toThrow(
        expect.objectContaining({
          code: 'ENOENT',
          message: expect.stringContaining('/no/such/dir'),
        }),
      );
      expect(start('/bin/sh', ['-c', 'true\0false'])).toThrow(
        expect.objectContaining({ code: 'EINVAL' }),
      );
    } finally {
      closeSync(fd);
    }
  });
});
