// The data dir must be a writable directory before anything is taken or written in it: a data
// dir that is a file, read-only, or cannot be created is a configuration error (exit 78), not a
// crash that Restart=always would repeat every second.
import { mkdirSync, rmSync, statSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExitCode, ExitError } from './exit-codes.js';

/** Less free space than this and the board cannot be relied on to take a write: not started. */
export const MIN_FREE_BYTES = 1024 * 1024;

function unusable(dir: string, why: string): ExitError {
  return new ExitError(ExitCode.config, `configuration error: dataDir ${dir}: ${why}`);
}

/** A full disk (ENOSPC, a quota, SQLite's SQLITE_FULL), wherever in the error's causes. */
export function isDiskFull(err: unknown): boolean {
  for (let e = err; e instanceof Error; e = e.cause) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL') return true;
  }
  return false;
}

/** What to say when the data dir's disk filled up during start-up (exit 78, no stack). */
export function diskFull(dir: string): ExitError {
  return unusable(dir, 'no space left on device; free some and start again');
}

export function prepareDataDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw unusable(dir, `cannot be created (${code})`);
  }
  if (!statSync(dir).isDirectory()) throw unusable(dir, 'is not a directory');
  // Permission bits do not tell (root ignores them; a read-only mount does not show): write.
  const probe = join(dir, `.write-test-${process.pid}`);
  try {
    writeFileSync(probe, '');
    rmSync(probe);
  } catch (err) {
    rmSync(probe, { force: true });
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw unusable(dir, `is not writable (${code})`);
  }
  const { bavail, bsize } = statfsSync(dir);
  if (bavail * bsize < MIN_FREE_BYTES)
    throw unusable(
      dir,
      `no space left on device (${Math.floor((bavail * bsize) / 1024)} KiB free, at least ${MIN_FREE_BYTES / 1024} KiB needed); free some and start again`,
    );
}
