// "Nothing outlives its run" for runs already closed (the worker reported its verdict, or some
// of it survived): ends what is left and records it, retried each tick until nothing is left.
import { pidExists } from '../../proc/index.js';
import type { Board } from '../board.js';
import { recordExitStatus, recordGone, recordLeftovers } from '../moves/records.js';
import { leaderOf, type RunRecord } from '../store/records/run.js';
import { readExitRecord, runDir } from './run-files.js';
import type { RunTerminator } from './run-terminator.js';

export class RunReaper {
  private readonly busy = new Set<string>();

  constructor(
    private readonly board: Board,
    private readonly terminator: RunTerminator,
    /** A worker that reported its verdict gets this long to exit by itself. */
    private readonly graceMs: number,
    private readonly dataDir: string,
  ) {}

  /**
   * Ends the leftovers of a closed run (unless its profile keeps them); `now`: without waiting
   * out the grace of a worker that reported its verdict (a stop that leaves nothing behind).
   */
  async reap(run: RunRecord, groupHeldUntil: number | null = null, now = false): Promise<void> {
    if (run.endedAt === null || run.procGoneAt !== null || this.busy.has(run.id)) return;
    const at = this.board.clock.wall();
    if (run.keepDescendants) {
      await this.board.transact((tx) => recordGone(tx, run.id));
      return;
    }
    const leader = leaderOf(run);
    if (!now && leader && pidExists(leader.pid, leader) && at - run.endedAt < this.graceMs) return;
    this.busy.add(run.id);
    try {
      const held = Math.max(groupHeldUntil ?? -1, run.groupHeldUntil ?? -1);
      const result = await this.terminator(run, held < 0 ? null : held);
      // The wrapper wrote how the worker ended (perhaps while no daemon ran).
      const exit = result.survived ? null : readExitRecord(runDir(this.dataDir, run.id));
      await this.board.transact(async (tx) => {
        await recordExitStatus(tx, run.id, exit);
        await recordLeftovers(tx, run.taskId, run.id, result);
      });
    } finally {
      this.busy.delete(run.id);
    }
  }
}
