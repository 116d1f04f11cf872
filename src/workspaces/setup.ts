// A repository's `setup` (e.g. npm ci) run once in a new worktree before its first run, its
// output in that run's log; a failure is the run's spawn_failed, with its exit code.
import { spawn } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';

/** A setup ended from outside (its run terminated, the daemon stopping): not the setup's fault. */
export class SetupStopped extends Error {
  constructor(
    message: string,
    /** Its run was terminated: the termination settles it, not the launch. */
    readonly byTermination: boolean,
  ) {
    super(message);
  }
}

/** Why a setup is stopped: the abort reason runSetup is given. */
export interface SetupStop {
  why: string;
  byTermination: boolean;
}

/**
 * Runs `argv` in `cwd` in a process group of its own, ended whole (SIGKILL to the group, while
 * its leader is unreaped and so the group provably ours) past `timeoutMs` or on `signal`.
 */
export async function runSetup(
  argv: string[],
  cwd: string,
  env: Record<string, string>,
  logPath: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<void> {
  if (signal?.aborted) throw stoppedBy(signal, 'workspace setup not started');
  const log = openSync(logPath, 'a');
  try {
    writeSync(log, `[gatehouse] workspace setup: ${JSON.stringify(argv)} in ${cwd}\n`);
    let stopped = false;
    let timedOut = false;
    const code = await new Promise<number | string>((resolve) => {
      let child: ReturnType<typeof spawn>;
      try {
        child = spawn(argv[0]!, argv.slice(1), {
          cwd,
          env,
          stdio: ['ignore', log, log],
          detached: true,
        });
      } catch (err) {
        resolve((err as Error).message);
        return;
      }
      let exited = false;
      const end = (byStop: boolean) => {
        if (exited || child.pid === undefined) return;
        if (byStop) stopped = true;
        else timedOut = true;
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Its group is gone already.
        }
      };
      const timer = setTimeout(() => end(false), timeoutMs);
      const onAbort = () => end(true);
      signal?.addEventListener('abort', onAbort, { once: true });
      child.once('error', (err) => {
        exited = true;
        resolve(err.message);
      });
      child.once('exit', (c, sig) => {
        exited = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(c ?? `signal ${sig}`);
      });
    });
    if (stopped && signal) {
      const err = stoppedBy(signal, 'workspace setup ended');
      writeSync(log, `[gatehouse] ${err.message}\n`);
      throw err;
    }
    if (code !== 0) {
      const what =
        typeof code === 'number'
          ? `exited with code ${code}`
          : timedOut
            ? `was ended after ${Math.round(timeoutMs / 1000)} s (the profile's maxRuntimeSeconds)`
            : `failed: ${code}`;
      writeSync(log, `[gatehouse] workspace setup ${what}\n`);
      throw new Error(`workspace setup ${JSON.stringify(argv)} ${what} (see the run's log)`);
    }
    writeSync(log, '[gatehouse] workspace setup done\n');
  } finally {
    closeSync(log);
  }
}

function stoppedBy(signal: AbortSignal, what: string): SetupStopped {
  const stop = signal.reason as SetupStop;
  return new SetupStopped(`${what}: ${stop.why}`, stop.byTermination);
}
