// Retention (docs/configuration.md `retention`): run folders of runs that ended more than runDays
// ago, events older than eventDays and inbound delivery ids past their replay window are
// removed in small batches on a timer of their own, never on a request's path.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Config } from '../../config/schema.js';
import { RepeatLimiter } from '../../repeat-limit.js';
import { RUN_ID } from '../model/ids.js';
import type { Board } from '../board.js';
import { prune, type Pruned } from '../moves/housekeeping.js';
import type { DispatcherLog } from './log.js';
import type { Ownership } from '../hosts/ownership.js';
import { removeRunDir } from './run-files.js';

const DAY_MS = 24 * 3600 * 1000;
/** What one pass removes at most of each kind; the next pass takes the rest. */
const BATCH = 200;
const INTERVAL_MS = 60_000;
/** Run folders checked against the board per turn of the event loop. */
const SWEEP_CHUNK = 500;
/** Inbound delivery ids are kept for the replay window (docs/platforms.md: a repeat within 24 h). */
const DELIVERY_WINDOW_MS = DAY_MS;

export class Retention {
  private timer: NodeJS.Timeout | null = null;
  private sweeping = false;
  private readonly failures = new RepeatLimiter();
  private readonly logError = (obj: object, msg: string) => this.log.error(obj, msg);
  constructor(
    private readonly board: Board,
    private readonly config: Pick<Config, 'dataDir' | 'retention' | 'api'>,
    /** On a shared board, only this host's run folders are on this disk. */
    private readonly ownership: Ownership,
    /** Whether the board is still open (a pass after close does nothing). */
    private readonly isOpen: () => boolean,
    private readonly log: DispatcherLog,
    /** Told what each pass removed (metrics). */
    private readonly onPruned: (done: Pruned) => void = () => undefined,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.safePass(), INTERVAL_MS);
    this.timer.unref();
    setImmediate(() => this.safePass());
  }

  /**
   * Removes the folders of runs the board does not have: a deleted task's folder that could not
   * be removed at once, or whose removal a dying daemon never reached. A folder is made only
   * after its run is committed, so one without a run is never a run starting.
   */
  async sweepOrphans(): Promise<number> {
    let names: string[];
    try {
      names = (await readdir(join(this.config.dataDir, 'runs'))).filter((n) => RUN_ID.test(n));
    } catch {
      return 0;
    }
    let removed = 0;
    for (let i = 0; i < names.length && this.isOpen(); i += SWEEP_CHUNK) {
      const chunk = names.slice(i, i + SWEEP_CHUNK);
      const known = await this.board.runs.existing(chunk);
      for (const runId of chunk) {
        if (!known.has(runId) && (await this.removeFolder(runId))) removed++;
      }
      await nextTurn();
    }
    return removed;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One pass: at most a batch of each kind. Returns what it removed. */
  async pass(): Promise<Pruned> {
    const now = this.board.clock.wall();
    const { runDays, eventDays } = this.config.retention;
    const prunedRuns: string[] = [];
    if (runDays !== null) {
      // Before this host has its id (-1): only runs of no host.
      const hostId = this.ownership.shared ? (this.ownership.hostId ?? -1) : null;
      const before = now - runDays * DAY_MS;
      for (const runId of await this.board.runs.prunableBefore(before, BATCH, hostId)) {
        // One folder that cannot go (a mount, a leftover still writing) holds up nothing else.
        if (await this.removeFolder(runId)) prunedRuns.push(runId);
      }
    }
    const done = await this.board.transact((tx) =>
      prune(tx, {
        prunedRuns,
        eventsBefore: eventDays === null ? null : now - eventDays * DAY_MS,
        eventLimit: BATCH * 5,
        deliveriesBefore: now - DELIVERY_WINDOW_MS,
        keysBefore: now - this.config.api.idempotencyHours * 3_600_000,
      }),
    );
    this.onPruned(done);
    return done;
  }

  /** Removes a run's folder; a failure is logged (once a minute) and tried again next pass. */
  private async removeFolder(runId: string): Promise<boolean> {
    try {
      await removeRunDir(this.config.dataDir, runId);
      return true;
    } catch (err) {
      this.failures.report(this.logError, err, 'retention: a run folder cannot be removed yet');
      return false;
    }
  }

  /** A pass, then a sweep; one at a time (a slow one is not overtaken by the next timer). */
  private safePass(): void {
    if (!this.isOpen() || this.sweeping) return;
    this.sweeping = true;
    this.passAndSweep()
      .catch((err: unknown) => this.failures.report(this.logError, err, 'retention pass failed'))
      .finally(() => (this.sweeping = false));
  }

  private async passAndSweep(): Promise<void> {
    const done = await this.pass();
    if (done.run_folders + done.events > 0) this.log.info({ pruned: done }, 'retention');
    const n = await this.sweepOrphans().catch((err: unknown) => {
      this.failures.report(this.logError, err, 'retention: removing folders failed');
      return 0;
    });
    if (n > 0) this.log.info({ removed: n }, 'retention: folders of deleted runs removed');
  }
}
