// The daemon's code, loaded from its bundle (dist/bundle/daemon.cjs, built by
// scripts/bundle.mjs) with the V8 code cache the build recorded from a real start: the modules
// are neither looked up file by file nor parsed and compiled again, which was most of a cold
// start. The cache file is the SHA-256 of the script it was made for, the SHA-256 of its payload
// and the payload: V8 checks neither, and a damaged payload crashes it natively (or hangs it)
// before anything is logged. A cache that is missing, damaged, made for another bundle or
// refused by this V8 only costs that time back. A start that uses the cache marks it on trial
// in the data dir until it serves: if it dies first, no later start uses that cache again.
// A missing or damaged bundle exits 78 (EX_CONFIG): restarting cannot help, building does.
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { PACKAGE_ROOT } from '../config/defaults.js';
import type { runDaemon } from '../gateway/daemon.js';
import { ExitCode, ExitError } from '../gateway/exit-codes.js';
import { identityOf } from '../proc/identity.js';

export const DAEMON_BUNDLE = join(PACKAGE_ROOT, 'dist/bundle/daemon.cjs');
export const DAEMON_CODE_CACHE = `${DAEMON_BUNDLE}.cache`;
/** In the data dir: the payload digest of a code cache whose start has not served yet. */
export const CACHE_TRIAL_FILE = 'code-cache.trial';

const DIGEST_BYTES = 32;

export interface LoadedDaemon {
  runDaemon: typeof runDaemon;
  /** Whether the recorded code cache was used. */
  cached: boolean;
  /** Why a cache that is there was not used, or null. */
  cacheSkipped: string | null;
  /** The code cache for this bundle as it stands now (what the build records after a start). */
  codeCache(): Buffer;
  /**
   * The start got far enough (it serves, or the process ends by itself: any JavaScript error,
   * a stop): the cache is fine. Only a native crash or a kill leaves the mark.
   */
  trialPassed(): void;
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();

/** The bundle is run as Node runs a CommonJS module: inside this function. */
const WRAP_HEAD = '(function (exports, require, module, __filename, __dirname) {';
const WRAP_TAIL = '\n})';

/** The payload, when the file is this script's cache and its payload is what was recorded. */
function recordedCache(path: string, digest: Buffer): { payload: Buffer; id: string } | null {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch {
    return null;
  }
  const payload = data.subarray(2 * DIGEST_BYTES);
  const recorded = data.subarray(DIGEST_BYTES, 2 * DIGEST_BYTES);
  if (!data.subarray(0, DIGEST_BYTES).equals(digest) || !sha256(payload).equals(recorded))
    return null;
  return { payload, id: recorded.toString('hex') };
}

/** The mark: the cache's id and the process trying it (pid and start time). */
function readMark(trial: string): { id: string; pid: number; startTime: number } | null {
  try {
    const [id, pid, startTime] = readFileSync(trial, 'utf8').trim().split(' ');
    return id ? { id, pid: Number(pid), startTime: Number(startTime) } : null;
  } catch {
    return null;
  }
}

/**
 * Whether the cache `id` may be used with `trial` (a path in the data dir, or null when the data
 * dir is not known): not when a start with it died before serving (its mark is left and its
 * process is gone), nor when the trial cannot be marked (a crash would then go unnoticed, start
 * after start). A start still running (one being replaced) is not a dead one.
 */
function mayUse(id: string, trial: string | null): string | null {
  if (trial === null) return 'the data dir is not known yet';
  const mark = readMark(trial);
  if (mark?.id === id) {
    const alive = Number.isInteger(mark.pid) && identityOf(mark.pid)?.startTime === mark.startTime;
    if (!alive)
      return `a start with it died before serving (${trial}); npm run build records a new one`;
  }
  try {
    writeFileSync(trial, `${id} ${process.pid} ${identityOf(process.pid)?.startTime ?? -1}\n`);
    return null;
  } catch (err) {
    return `its trial cannot be marked (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
  }
}

function damaged(bundle: string, err: unknown): ExitError {
  const why = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return new ExitError(
    ExitCode.config,
    `the daemon's bundle ${bundle} is damaged or incomplete (${why.slice(0, 300)}): run npm run build`,
  );
}

/**
 * Loads and runs the bundle's top level, as Node would load it as a CommonJS module. `trial`:
 * where this start marks the cache on trial (see above); null uses no cache.
 */
export function loadDaemon(
  bundle = DAEMON_BUNDLE,
  cache = DAEMON_CODE_CACHE,
  trial: string | null = null,
): LoadedDaemon {
  let bytes: Buffer;
  try {
    bytes = readFileSync(bundle);
  } catch (err) {
    throw new ExitError(
      ExitCode.config,
      `the daemon's bundle ${bundle} cannot be read (${(err as NodeJS.ErrnoException).code}): run npm run build`,
    );
  }
  // The digest of the bytes as read, not of the decoded text (hashing a string encodes it
  // again: 8.6 ms against 1.9 for the bundle's 2.2 MB here).
  const digest = createHash('sha256').update(WRAP_HEAD).update(bytes).update(WRAP_TAIL).digest();
  const wrapped = `${WRAP_HEAD}${bytes.toString('utf8')}${WRAP_TAIL}`;
  const recorded = recordedCache(cache, digest);
  const cacheSkipped = recorded ? mayUse(recorded.id, trial) : null;
  const cachedData = recorded && cacheSkipped === null ? recorded.payload : undefined;
  const module = { exports: {} as { runDaemon?: typeof runDaemon }, loaded: false };
  const require = createRequire(bundle);
  // The PostgreSQL store is a chunk of its own (dist/bundle/daemon-postgres.cjs), loaded only
  // when the board is on PostgreSQL: it requires this bundle's exports by its file name, which
  // must find this module, not load the bundle a second time.
  require.cache[bundle] = module as unknown as NodeJS.Module;
  let script: Script;
  try {
    script = new Script(wrapped, { filename: bundle, cachedData });
    const init = script.runInThisContext() as (...args: unknown[]) => void;
    init(module.exports, require, module, bundle, dirname(bundle));
    module.loaded = true;
  } catch (err) {
    delete require.cache[bundle];
    throw damaged(bundle, err);
  }
  if (typeof module.exports.runDaemon !== 'function')
    throw new ExitError(
      ExitCode.config,
      `the daemon's bundle ${bundle} does not export runDaemon: run npm run build`,
    );
  const cached = cachedData !== undefined && !script.cachedDataRejected;
  return {
    runDaemon: module.exports.runDaemon,
    cached,
    cacheSkipped,
    codeCache: () => {
      const payload = script.createCachedData();
      return Buffer.concat([digest, sha256(payload), payload]);
    },
    trialPassed: () => {
      // Only this process's own mark: a start replacing it may have marked the cache since.
      if (cachedData !== undefined && trial !== null && readMark(trial)?.pid === process.pid)
        rmSync(trial, { force: true });
    },
  };
}
