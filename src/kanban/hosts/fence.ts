// This daemon's side of its fence keeper (src/proc/fence-keeper.ts): started with the host's
// lease on a shared board, told each new deadline and each run it must end at the fence, started
// again if it dies; at start, the keepers of this data dir's earlier daemons are told to go once
// this one's keeper guards the runs it adopted from them.
import type { Clock } from '../../clock.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { PACKAGE_ROOT } from '../../config/defaults.js';
import { identityOf, sameIdentity, type ProcessIdentity } from '../../proc/index.js';
import { KEEPER_UP, KEEPERS_DIR, type KeeperMessage } from '../../proc/fence-protocol.js';
import { readCmdline } from '../../proc/proc-stat.js';
import type { DispatcherLog } from '../dispatch/log.js';

const KEEPER = join(PACKAGE_ROOT, 'dist/proc/fence-keeper.js');
/** Between attempts to start a keeper that failed or ended. */
const RETRY_MS = 1000;
/** What is kept of a keeper's stdout line by line before `up` (a preload may print first). */
const LINE_MAX = 4096;

export class Fence {
  private child: ChildProcess | null = null;
  /** The keeper running now said it is up (it reads its pipe): until then it guards nothing. */
  private up = false;
  /** Done once a keeper is up (now, if one is). */
  private waitingUp: (() => void)[] = [];
  private last: { termAt: number; killAt: number } | null = null;
  private readonly guarded = new Map<
    string,
    { leader: ProcessIdentity | null; cgroup: string | null }
  >();
  private closed = false;
  /** A keeper could not be started, or ended: none is started again before this (boot clock). */
  private retryAt = 0;

  constructor(
    private readonly dataDir: string,
    private readonly log: DispatcherLog,
    /** The keeper's environment: the workers' (none of the daemon's own secrets). */
    private readonly env: Record<string, string>,
    /** Its boot clock is the keeper's: the deadlines sent to it are read on it. */
    private readonly clock: Clock,
    /** Told each time a keeper says it is up: new claims may be safe again. */
    private readonly onUp: () => void = () => {},
  ) {}

  /**
   * A keeper runs, has said it is up, and its pipe has taken everything sent to it: a run
   * started now is guarded. Not once closed (a stop); not while a keeper is being started (one
   * that dies as it starts guards nothing, and its pipe's messages die with it); and not while
   * the keeper's pipe holds messages back (a starved keeper): a guard sent then would not be
   * its before a fork.
   */
  get guarding(): boolean {
    if (this.closed || !this.child || !this.up) return false;
    const stdin = this.child.stdin;
    // A pipe that failed (EPIPE: the keeper is gone, its exit not heard yet) takes nothing.
    return stdin !== null && !stdin.destroyed && stdin.writableLength === 0;
  }

  /** Runs `fn` once a keeper is up: now if one is, else when the next one says so. */
  whenUp(fn: () => void): void {
    if (this.closed) return;
    if (this.up) fn();
    else this.waitingUp.push(fn);
  }

  /** The last deadline's TERM (boot clock), or 0 before any: no run may start past it. */
  get termAt(): number {
    return this.last?.termAt ?? 0;
  }

  /** The keeper's deadline for every run it guards: TERM at termAt, KILL at killAt (boot clock). */
  set(termAt: number, killAt: number): void {
    this.last = { termAt, killAt };
    this.send({ fence: this.last });
  }

  guard(runId: string, leader: ProcessIdentity | null, cgroup: string | null): void {
    this.guarded.set(runId, { leader, cgroup });
    this.send({ guard: { runId, leader, cgroup } });
  }

  release(runId: string): void {
    if (this.guarded.delete(runId)) this.send({ release: runId });
  }

  /**
   * Tells the keepers of this data dir's earlier daemons to go: their runs are guarded by this
   * one's now. Each is proven ours first (its identity, and a command line naming the keeper and
   * this data dir, whichever install started it); anything else is left alone.
   */
  relieveEarlier(): void {
    const dir = join(this.dataDir, KEEPERS_DIR);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    const here = realpathOr(this.dataDir);
    for (const name of names) {
      const path = join(dir, name);
      const id = earlierKeeper(path);
      if (!id || id.pid === this.child?.pid) continue;
      const live = identityOf(id.pid);
      if (!live || !sameIdentity(live, id)) {
        // Its keeper is gone (killed, or the machine rebooted): the file is all that is left.
        rmSync(path, { force: true });
        continue;
      }
      const [, program, keeps] = readCmdline(id.pid) ?? [];
      if (basename(program ?? '') !== basename(KEEPER) || realpathOr(keeps ?? '') !== here) {
        this.log.warn({ keeperPid: id.pid }, 'fence: a keeper file names a process not ours');
        continue;
      }
      try {
        process.kill(id.pid, 'SIGUSR2');
        this.log.info({ keeperPid: id.pid }, 'fence: an earlier keeper handed its runs over');
      } catch {
        // gone meanwhile
      }
    }
  }

  private send(message: KeeperMessage): void {
    if (this.closed) return;
    // A keeper started now is told everything, this message included.
    if (this.child) this.child.stdin?.write(`${JSON.stringify(message)}\n`);
    else this.start();
  }

  /** Starts a keeper and tells it everything it must know; a failure is tried again later. */
  private start(): void {
    if (this.closed || this.child || this.clock.boot() < this.retryAt) return;
    let child: ChildProcess;
    try {
      const log = openSync(join(this.dataDir, 'fence-keeper.log'), 'a');
      try {
        child = spawn(process.execPath, [KEEPER, this.dataDir], {
          detached: true,
          stdio: ['pipe', 'pipe', log],
          env: this.env,
        });
      } finally {
        closeSync(log);
      }
    } catch (err) {
      return this.retryLater(err, 'the keeper cannot be started');
    }
    this.child = child;
    child.unref();
    (child.stdin as { unref?: () => void } | null)?.unref?.();
    child.stdin?.on('error', () => undefined);
    const said = child.stdout;
    (said as { unref?: () => void } | null)?.unref?.();
    let heard = '';
    const onSaid = (chunk: Buffer) => {
      heard += chunk.toString('latin1');
      const lines = heard.split('\n');
      // The last piece is a line not ended yet; a line longer than any `up` is not kept whole.
      heard = (lines.pop() ?? '').slice(-LINE_MAX);
      if (!lines.includes(KEEPER_UP)) return;
      said?.off('data', onSaid);
      // Nothing else is read from it: what a keeper says after this is let go.
      said?.resume();
      if (this.child === child && !this.closed) this.keeperUp();
    };
    said?.on('data', onSaid);
    const gone = (err: unknown, what: string) => {
      if (this.child !== child) return;
      this.child = null;
      this.up = false;
      this.retryLater(err, what);
    };
    // A spawn that fails (EAGAIN, EMFILE) says so here, not by throwing.
    child.once('error', (err) => gone(err, 'the keeper cannot be started'));
    child.once('exit', (code, signal) => gone({ code, signal }, 'the keeper ended'));
    const lines: KeeperMessage[] = [
      ...(this.last ? [{ fence: this.last }] : []),
      ...[...this.guarded].map(([runId, run]) => ({ guard: { runId, ...run } })),
    ];
    child.stdin?.write(lines.map((m) => `${JSON.stringify(m)}\n`).join(''));
  }

  private keeperUp(): void {
    this.up = true;
    for (const fn of this.waitingUp.splice(0)) fn();
    this.onUp();
  }

  /** No new claims meanwhile (HostLease.claimable); the next keeper is told everything. */
  private retryLater(err: unknown, what: string): void {
    if (this.closed) return;
    this.log.error({ err }, `fence: ${what}; no new claims until one runs`);
    this.retryAt = this.clock.boot() + RETRY_MS;
    setTimeout(() => this.start(), RETRY_MS).unref();
  }

  /**
   * The daemon stops: the keeper goes on with the last deadline and the runs it guards (a
   * daemon restarted within its lease takes them over; otherwise they end at the fence).
   */
  close(): void {
    this.closed = true;
    this.child?.stdin?.end();
    this.child?.stdout?.destroy();
    this.child = null;
    this.up = false;
    this.waitingUp = [];
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

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
