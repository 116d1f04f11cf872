// A repository's `setup` (e.g. npm ci) run once in a new worktree before its first run, its
// output in that run's log; a failure is the run's spawn_failed, with its exit code.
import { spawn } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';

export async function runSetup(
  argv: string[],
  cwd: string,
  env: Record<string, string>,
  logPath: string,
  timeoutMs: number,
): Promise<void> {
  const log = openSync(logPath, 'a');
  try {
    writeSync(log, `[gatehouse] workspace setup: ${JSON.stringify(argv)} in ${cwd}\n`);
    const code = await new Promise<number | string>((resolve) => {
      let child;
      try {
        child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: ['ignore', log, log] });
      } catch (err) {
        resolve((err as Error).message);
        return;
      }
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.once('error', (err) => resolve(err.message));
      child.once('exit', (c, signal) => {
        clearTimeout(timer);
        resolve(c ?? `signal ${signal}`);
      });
    });
    if (code !== 0) {
      const what = typeof code === 'number' ? `exited with code ${code}` : `failed: ${code}`;
      writeSync(log, `[gatehouse] workspace setup ${what}\n`);
      throw new Error(`workspace setup ${JSON.stringify(argv)} ${what} (see the run's log)`);
    }
    writeSync(log, '[gatehouse] workspace setup done\n');
  } finally {
    closeSync(log);
  }
}
