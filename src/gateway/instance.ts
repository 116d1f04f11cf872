// Becoming the single instance of a data dir: lock, stale pid files, refusal (73) or takeover.
import { systemClock } from '../clock.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { currentBootId, identityOf, type ProcessIdentity } from '../proc/index.js';
import { ExitCode, ExitError } from './exit-codes.js';
import { InstanceLock, LOCK_FILE, LOCK_PATIENCE_MS } from './instance-lock.js';
import { PID_FILE, ownerIsLive, readPidFile, writePidFile, type PidRecord } from './pid-file.js';
import { TAKEOVER_FILE, clearTakeover, endOwner } from './takeover.js';

export interface AcquireOptions {
  dataDir: string;
  replace: boolean;
  replaceTimeoutMs: number;
  killTimeoutMs: number;
  port: number;
  version: string;
  log: (msg: string) => void;
}

export interface Instance {
  lock: InstanceLock;
  /** The workspaces root's, once taken (lockWorkspacesRoot). */
  rootLock: InstanceLock | null;
  self: ProcessIdentity;
  pidPath: string;
  record: PidRecord;
  /** The previous instance ended without cleaning up (it left its pid file). */
  uncleanPrevious: boolean;
}

const POLL_MS = 20;

function ownIdentity(): ProcessIdentity {
  return identityOf(process.pid) ?? { pid: process.pid, startTime: 0, bootId: currentBootId() };
}

function describeStale(record: PidRecord | null): string {
  return record
    ? `naming pid ${record.pid} (not a live gatehouse for this data dir)`
    : 'unreadable';
}

/**
 * Takes the data dir or throws ExitError: 73 when a live owner exists and `replace` is off,
 * 1 when a takeover fails. Never signals a process it has not proven to be the owner.
 */
export async function acquireInstance(opts: AcquireOptions): Promise<Instance> {
  const pidPath = join(opts.dataDir, PID_FILE);
  const lockPath = join(opts.dataDir, LOCK_FILE);
  const markPath = join(opts.dataDir, TAKEOVER_FILE);
  const liveOwner = () => {
    const record = readPidFile(pidPath);
    return record !== null && ownerIsLive(record, opts.dataDir) ? record : null;
  };
  let deadline = performance.now() + opts.replaceTimeoutMs;
  for (;;) {
    // No live instance holds it: perhaps another start touching the file this very moment.
    const lock =
      InstanceLock.tryAcquire(lockPath) ??
      (liveOwner() ? null : InstanceLock.tryAcquire(lockPath, LOCK_PATIENCE_MS));
    if (lock) {
      const uncleanPrevious = existsSync(pidPath);
      if (uncleanPrevious)
        opts.log(`replacing stale pid file ${describeStale(readPidFile(pidPath))}`);
      clearTakeover(markPath);
      const self = ownIdentity();
      const record: PidRecord = {
        ...self,
        argv: process.argv,
        port: opts.port,
        dataDir: opts.dataDir,
        startedAt: systemClock.wall(),
        version: opts.version,
      };
      try {
        writePidFile(pidPath, record);
      } catch (err) {
        lock.release();
        throw err;
      }
      return { lock, rootLock: null, self, pidPath, record, uncleanPrevious };
    }
    const owner = liveOwner();
    if (!opts.replace) {
      const who = owner ? `pid ${owner.pid}` : 'another instance that is starting';
      throw new ExitError(
        ExitCode.alreadyRunning,
        `gatehouse is already running for ${opts.dataDir} (${who}); use 'gatehouse run --replace' to take over or 'gatehouse stop' to stop it`,
      );
    }
    if (owner) {
      opts.log(`taking over from pid ${owner.pid}`);
      const { sigkill } = await endOwner(owner, markPath, {
        timeoutMs: opts.replaceTimeoutMs,
        killTimeoutMs: opts.killTimeoutMs,
      });
      opts.log(`previous instance (pid ${owner.pid}) ended${sigkill ? ' after SIGKILL' : ''}`);
      deadline = performance.now() + opts.replaceTimeoutMs;
      // Its lock went with it: take it now rather than a poll later.
      continue;
    } else if (performance.now() > deadline) {
      throw new ExitError(
        ExitCode.alreadyRunning,
        `the data dir ${opts.dataDir} is locked but its pid file does not name a live gatehouse; not taking over what cannot be verified`,
      );
    }
    await sleep(POLL_MS);
  }
}
