// The data dir must be a writable directory before anything is taken or written in it: a data
// dir that is a file, read-only, or cannot be created is a configuration error (exit 78), not a
// crash that Restart=always would repeat every second.
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExitCode, ExitError } from './exit-codes.js';

function unusable(dir: string, why: string): ExitError {
  return new ExitError(ExitCode.config, `configuration error: dataDir ${dir}: ${why}`);
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
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw unusable(dir, `is not writable (${code})`);
  }
}
