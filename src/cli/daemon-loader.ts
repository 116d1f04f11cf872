// The daemon's code, loaded from its one-file bundle (dist/bundle/daemon.cjs, built by
// scripts/bundle.mjs) with the V8 code cache the build recorded from a real start: the modules
// are neither looked up file by file nor parsed and compiled again, which was most of a cold
// start. A cache that is missing, was built for another bundle (its first 32 bytes are the
// SHA-256 of the script compiled) or is refused by this V8 only costs that time back. Without a
// bundle, `run` exits 78 (EX_CONFIG): restarting cannot help, building does.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { PACKAGE_ROOT } from '../config/defaults.js';
import type { runDaemon } from '../gateway/daemon.js';
import { ExitCode, ExitError } from '../gateway/exit-codes.js';

export const DAEMON_BUNDLE = join(PACKAGE_ROOT, 'dist/bundle/daemon.cjs');
export const DAEMON_CODE_CACHE = `${DAEMON_BUNDLE}.cache`;

const DIGEST_BYTES = 32;

export interface LoadedDaemon {
  runDaemon: typeof runDaemon;
  /** Whether the recorded code cache was used. */
  cached: boolean;
  /** The code cache for this bundle as it stands now (what the build records after a start). */
  codeCache(): Buffer;
}

function recordedCache(path: string, digest: Buffer): Buffer | undefined {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch {
    return undefined;
  }
  return data.subarray(0, DIGEST_BYTES).equals(digest) ? data.subarray(DIGEST_BYTES) : undefined;
}

/** Loads and runs the bundle's top level, as Node would load it as a CommonJS module. */
export function loadDaemon(bundle = DAEMON_BUNDLE, cache = DAEMON_CODE_CACHE): LoadedDaemon {
  let source: string;
  try {
    source = readFileSync(bundle, 'utf8');
  } catch (err) {
    throw new ExitError(
      ExitCode.config,
      `the daemon's bundle ${bundle} cannot be read (${(err as NodeJS.ErrnoException).code}): run npm run build`,
    );
  }
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  const digest = createHash('sha256').update(wrapped).digest();
  const cachedData = recordedCache(cache, digest);
  const script = new Script(wrapped, { filename: bundle, cachedData });
  const module = { exports: {} as { runDaemon?: typeof runDaemon } };
  const init = script.runInThisContext() as (...args: unknown[]) => void;
  init(module.exports, createRequire(bundle), module, bundle, dirname(bundle));
  if (typeof module.exports.runDaemon !== 'function')
    throw new ExitError(
      ExitCode.config,
      `the daemon's bundle ${bundle} does not export runDaemon: run npm run build`,
    );
  return {
    runDaemon: module.exports.runDaemon,
    cached: cachedData !== undefined && !script.cachedDataRejected,
    codeCache: () => Buffer.concat([digest, script.createCachedData()]),
  };
}
