// The judge of an attempt (docs/attempts.md): the group's command run in the attempt's worktree,
// in its profile's sandbox (its own worktree and its git view writable, the rest of the board
// hidden), in a process group of its own, ended whole at its deadline. Its exit code and the tail
// of what it printed are its result.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Config, Profile } from '../../config/schema.js';
import { runView } from '../../sandbox/run-view.js';
import { bwrapArgs, type Mount } from '../../sandbox/view.js';

/** The most of its output kept (its tail). */
const OUTPUT_BYTES = 4096;

export interface JudgeRequest {
  command: string[];
  /** The attempt's worktree. */
  cwd: string;
  profile: Profile;
  config: Config;
  /** Its worktree's git view, for a sandboxed judge. */
  git: { mounts: Mount[]; env: Record<string, string> };
  /** Where the sandbox's run folder is (read-only inside). */
  dir: string;
  timeoutMs: number;
}

export function runJudge(req: JudgeRequest): Promise<{ exitCode: number | null; output: string }> {
  mkdirSync(req.dir, { recursive: true, mode: 0o700 });
  const env = { ...req.config.workerEnv, ...req.git.env, HOME: join(req.dir, 'home') };
  mkdirSync(env.HOME, { recursive: true, mode: 0o700 });
  const sandboxed = req.profile.sandbox.kind === 'bwrap';
  const argv = sandboxed
    ? [
        'bwrap',
        ...bwrapArgs(
          runView({
            config: req.config,
            // The profile's own program decides what is bound, never the judge's argv.
            profile: req.profile,
            runDir: req.dir,
            env,
            cwd: req.cwd,
            workspace: req.cwd,
            gitMounts: req.git.mounts,
          }),
        ),
        '--',
        ...req.command,
      ]
    : req.command;
  return new Promise((resolve) => {
    let out = Buffer.alloc(0);
    const keep = (chunk: Buffer) => {
      out = Buffer.concat([out, chunk]);
      if (out.length > OUTPUT_BYTES) out = out.subarray(out.length - OUTPUT_BYTES);
    };
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: req.cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const timer = setTimeout(() => {
      // Its whole group: a judge's own children (a test runner's) end with it.
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    }, req.timeoutMs);
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ exitCode: null, output: `the judge could not start: ${err.message}` });
    });
    // Reaped: its pid is not ours to signal any more. What it left holding its output (a
    // server it started) keeps nothing waiting: the output is closed after a moment.
    child.on('exit', () => {
      clearTimeout(timer);
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, 2000).unref();
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const tail = out.toString('utf8');
      resolve({
        exitCode: code,
        output: signal ? `${tail}\n(ended by ${signal}: past ${req.timeoutMs / 1000} s)` : tail,
      });
    });
  });
}
