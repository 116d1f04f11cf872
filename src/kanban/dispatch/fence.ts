// This daemon's side of its fence keeper (src/proc/fence-keeper.ts): started with the host's
// lease on a shared board, told each new deadline and each run it must end at the fence, started
// again if it dies; at start, the keepers of this data dir's earlier daemons are told to go once
// this one's keeper guards the runs it adopted from them.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../config/defaults.js';
import { identityOf, sameIdentity, type ProcessIdentity } from '../../proc/index.js';
import { KEEPERS_DIR, type KeeperMessage } from '../../proc/fence-protocol.js';
import { readCmdline } from '../../proc/proc-stat.js';
import type { DispatcherLog } from './log.js';

const KEEPER = join(PACKAGE_ROOT, 'dist/proc/fence-keeper.js');

export class Fence {
  private child: ChildProcess | null = null;
  private last: { termAt: number; killAt: number } | null = null;
  private readonly guarded = new Map<string, ProcessIdentity | null>();
  private closed = false;

  constructor(
    private readonly dataDir: string,
    private readonly log: DispatcherLog,
  ) {}

  /** The keeper's deadline for every run it guards: TERM at termAt, KILL at killAt (boot clock). */
  set(termAt: number, killAt: number): void {
    this.last = { termAt, killAt };
    this.send({ fence: this.last });
  }

  guard(runId: string, leader: ProcessIdentity | null): void {
    this.guarded.set(runId, leader);
    this.send({ guard: { runId, leader } });
  }

  release(runId: string): void {
    if (this.guarded.delete(runId)) this.send({ release: runId });
  }

  /**
   * Tells the keepers of this data dir's earlier daemons to go: their runs are guarded by this
   * one's now. Each is proven ours first (its identity, and a command line naming the keeper and
   * this data dir); anything else is left alone.
   */
  relieveEarlier(): void {
    const dir = join(this.dataDir, KEEPERS_DIR);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const id = earlierKeeper(join(dir, name));
      if (!id || id.pid === this.child?.pid) continue;
      const live = identityOf(id.pid);
      const argv = readCmdline(id.pid) ?? [];
      if (
        !live ||
        !sameIdentity(live, id) ||
        !argv.includes(KEEPER) ||
        !argv.includes(this.dataDir)
      )
        continue;
      try {
        process.kill(id.pid, 'SIGUSR2');
        this.log.info(
          { keeperPid: id.pid },
          'fence: an earlier daemon’s keeper handed its runs over',
        );
      } catch {
        // gone meanwhile
      }
    }
  }

  private send(message: KeeperMessage): void {
    if (this.closed) return;
    const child = this.child ?? this.start();
    child.stdin?.write(`${JSON.stringify(message)}\n`);
  }

  /** Starts a keeper and tells it everything it must know. */
  private start(): ChildProcess {
    const log = openSync(join(this.dataDir, 'fence-keeper.log'), 'a');
    let child: ChildProcess;
    try {
      child = spawn(process.execPath, [KEEPER, this.dataDir], {
        detached: true,
        stdio: ['pipe', 'ignore', log],
      });
    } finally {
      closeSync(log);
    }
    this.child = child;
    child.unref();
    (child.stdin as { unref?: () => void } | null)?.unref?.();
    child.stdin?.on('error', () => undefined);
    child.once('exit', (code, signal) => {
      if (this.child === child) this.child = null;
      if (this.closed) return;
      this.log.error({ code, signal }, 'fence: the keeper ended; starting another');
      // Told at once the deadline and every run.
      this.start();
    });
    if (this.last) child.stdin?.write(`${JSON.stringify({ fence: this.last })}\n`);
    for (const [runId, leader] of this.guarded)
      child.stdin?.write(`${JSON.stringify({ guard: { runId, leader } })}\n`);
    return child;
  }

  /**
   * The daemon stops: the keeper goes on with the last deadline and the runs it guards (a
   * daemon restarted within its lease takes them over; otherwise they end at the fence).
   */
  close(): void {
    this.closed = true;
    this.child?.stdin?.end();
    this.child = null;
  }
}

function earlierKeeper(path: string): ProcessIdentity | null {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<ProcessIdentity>;
    return Number.isSafeInteger(parsed.pid) &&
      Number.isSafeInteger(parsed.startTime) &&
      typeof parsed.bootId === 'string'
      ? (parsed as ProcessIdentity)
      : null;
  } catch {
    return null;
  }
}
