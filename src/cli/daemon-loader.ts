// The daemon's code, loaded from its bundle (dist/bundle/daemon.cjs, built by scripts/bundle.mjs):
// one file instead of some three hundred modules looked up one by one. A missing or damaged
// bundle exits 78 (EX_CONFIG): restarting cannot help, building does.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../config/defaults.js';
import type { runDaemon } from '../gateway/daemon.js';
import { ExitCode, ExitError } from '../gateway/exit-codes.js';

export const DAEMON_BUNDLE = join(PACKAGE_ROOT, 'dist/bundle/daemon.cjs');

/** Loads the bundle as Node loads a CommonJS module; its runDaemon. */
export function loadDaemon(bundle = DAEMON_BUNDLE): typeof runDaemon {
  if (!existsSync(bundle))
    throw new ExitError(
      ExitCode.config,
      `the daemon's bundle ${bundle} cannot be read (ENOENT): run npm run build`,
    );
  let loaded: { runDaemon?: typeof runDaemon };
  try {
    loaded = createRequire(bundle)(bundle) as typeof loaded;
  } catch (err) {
    // A package it needs missing is said as such (MODULE_NOT_FOUND, naming the package).
    const e = err as Error;
    throw new ExitError(
      ExitCode.config,
      `the daemon's bundle ${bundle} is damaged or incomplete (${`${e.name}: ${e.message}`.slice(0, 300)}): run npm run build`,
    );
  }
  if (typeof loaded.runDaemon !== 'function')
    throw new ExitError(
      ExitCode.config,
      `the daemon's bundle ${bundle} does not export runDaemon: run npm run build`,
    );
  return loaded.runDaemon;
}
