// Starting a worker's process (src/proc/start-process.ts): what the started program finds (its
// own session and group, stdin from /dev/null, only its three standard descriptors, default
// signals, exactly the environment and directory given) and how its end is told.
import {
  closeSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  writeFileSync,
} from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readCmdline, readProcStat, startProcess, type ProcessEnd } from '../../src/proc/index.js';
import { tempDir } from '../helpers/daemon.js';
import { TEST_MARK } from '../helpers/procs.js';
import { waitFor } from '../helpers/wait.js';

const [markName, markValue] = TEST_MARK.split('=') as [string, string];
const ENV = { PATH: '/usr/bin:/bin', [markName]: markValue };

/** `script` started in sh, its output to /dev/null (closed here as soon as the start is asked). */
function shell(script: string) {
  const fd = openSync('/dev/null', 'a');
  try {
    return startProcess({ file: '/bin/sh', args: ['-c', script], env: ENV, cwd: '/', output: fd });
  } finally {
    closeSync(fd);
  }
}

/**
 * A started process as it is once it runs `sleep` (which changes nothing of what it was given),
 * read from /proc by this test: a shell's own view of itself is blurred by what it does as it
 * runs a command (dash blocks every signal while it vforks, and holds a pipeline's descriptors).
 */
async function sleeping(env: Record<string, string>, cwd: string) {
  const out = join(tempDir(), 'out');
  const fd = openSync(out, 'a');
  let starting;
  try {
    starting = startProcess({
      file: '/bin/sh',
      args: ['-c', 'echo out; echo err >&2; exec sleep 30'],
      env,
      cwd,
      output: fd,
    });
  } finally {
    // Closed before the spawn has happened (it runs on a thread of the pool): the starter holds
    // a copy, so the output still arrives.
    closeSync(fd);
  }
  const started = await starting;
  const { pid } = started;
  await waitFor('it to be sleep', () => readCmdline(pid)?.[0] === 'sleep');
  return { started, pid, out };
}

describe('startProcess', () => {
  it('starts the program in a session and group of its own, with /dev/null for stdin, one output, no other descriptor, default signals, and exactly the environment and directory given', async () => {
    const cwd = tempDir();
    const env = { ...ENV, ONLY: 'this' };
    const { started, pid, out } = await sleeping(env, cwd);
    try {
      const stat = readProcStat(pid)!;
      expect([stat.pgid, stat.sid]).toEqual([pid, pid]);
      expect(readdirSync(`/proc/${pid}/fd`).sort()).toEqual(['0', '1', '2']);
      expect(readlinkSync(`/proc/${pid}/fd/0`)).toBe('/dev/null');
      expect(readFileSync(out, 'utf8')).toBe('out\nerr\n');
      expect(readlinkSync(`/proc/${pid}/cwd`)).toBe(cwd);
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      expect(status).toMatch(/^SigBlk:\s+0+$/m);
      expect(status).toMatch(/^SigIgn:\s+0+$/m);
      // sh adds PWD itself.
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
      expect(environ.filter((v) => !/^(PWD|OLDPWD)=/.test(v)).sort()).toEqual(
        Object.entries(env)
          .map(([k, v]) => `${k}=${v}`)
          .sort(),
      );
    } finally {
      process.kill(pid, 'SIGKILL');
    }
    const end = await new Promise<ProcessEnd>((resolve) => started.onExit(resolve));
    expect(end).toEqual({ code: null, signal: 'SIGKILL', reaped: true });
  });

  it('tells the exit status it ended with', async () => {
    const started = await shell('exit 7');
    const end = await new Promise<ProcessEnd>((resolve) => started.onExit(resolve));
    expect(end).toEqual({ code: 7, signal: null, reaped: true });
  });

  it('tells the signal that ended it, and keeps it unreaped (its identity readable) until then', async () => {
    // SIGABRT, not its alias SIGIOT: the names child_process gives.
    const started = await shell('ulimit -c 0; kill -ABRT $$');
    // Read as soon as the start is known: a zombie at worst, never another process.
    expect(readProcStat(started.pid)?.pid).toBe(started.pid);
    const end = await new Promise<ProcessEnd>((resolve) => started.onExit(resolve));
    expect(end).toEqual({ code: null, signal: 'SIGABRT', reaped: true });
    expect(readProcStat(started.pid)).toBeNull();
  });

  it('lets a worker thread end while a process it started still runs (its watch closes with it), and while a start is still under way', () => {
    // Without that, Node crashed the whole process as the thread's event loop closed (SIGSEGV or
    // an abort). The process ends by itself once the thread has: nothing else keeps it alive.
    const starter = pathToFileURL(join(import.meta.dirname, '../../dist/proc/index.js')).href;
    const child = spawnSync(
      process.execPath,
      [
        '-e',
        `const { Worker } = require('node:worker_threads');
         const w = new Worker(${JSON.stringify(`
           import(${JSON.stringify(starter)}).then(async ({ startProcess }) => {
             const fd = require('node:fs').openSync('/dev/null', 'a');
             const start = () => startProcess({ file: '/bin/sh', args: ['-c', 'sleep 0.5'], env: ${JSON.stringify(ENV)}, cwd: '/', output: fd });
             const p = await start();
             // Asked for and not awaited: the thread ends while it is spawned, or before.
             start();
             require('node:worker_threads').parentPort.postMessage(p.pid);
           });`)}, { eval: true });
         w.on('message', (pid) => { process.stdout.write(String(pid)); w.terminate(); });`,
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect(Number(child.stdout)).toBeGreaterThan(0);
  });

  it('rejects with the errno when nothing can be started, and refuses a NUL byte', async () => {
    const fd = openSync('/dev/null', 'a');
    const notExecutable = join(tempDir(), 'script');
    writeFileSync(notExecutable, '#!/bin/sh\n', { mode: 0o644 });
    try {
      const start = (file: string, args: string[], cwd = '/') =>
        startProcess({ file, args, env: ENV, cwd, output: fd });
      await expect(start('/no/such/program', [])).rejects.toMatchObject({ code: 'ENOENT' });
      await expect(start(notExecutable, [])).rejects.toMatchObject({ code: 'EACCES' });
      await expect(start('/bin/sh', ['-c', 'true'], '/no/such/dir')).rejects.toMatchObject({
        code: 'ENOENT',
        message: expect.stringContaining('/no/such/dir'),
      });
      await expect(start('/bin/sh', ['-c', 'true\0false'])).rejects.toMatchObject({
        code: 'EINVAL',
      });
    } finally {
      closeSync(fd);
    }
  });
});
