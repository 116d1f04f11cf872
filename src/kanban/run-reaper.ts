// "Nothing outlives its run": ends whatever is left of a finished run's process group.
import { pidExists } from '../proc/index.js';
import type { Board } from './board.js';
import type { RunTerminator } from './run-termination.js';

export class RunReaper {
  private readonly busy = new Set<string>();

  constructor(
    private readonly board: Board,
    private readonly terminator: RunTerminator,
    /** A worker that reported its verdict gets this long to exit by itself. */
    private readonly graceMs: number,
  ) {}

  /**
   * Ends the leftovers of a closed run (unless its profile keeps them) and records what was
   * ended as `worker_terminated`; marks the run's group gone once nothing of it survives.
   */
  async reap(runId: string): Promise<void> {
    const run = this.board.runs.get(runId);
    if (!run || run.endedAt === null || run.procGoneAt !== null || this.busy.has(runId)) return;
    const now = this.board.clock();
    if (run.keepDescendants || run.pid === null || run.startTime === null || run.bootId === null) {
      this.board.runs.markGone(runId, now);
      return;
    }
    const leader = { pid: run.pid, startTime: run.startTime, bootId: run.bootId };
    if (pidExists(leader.pid, leader) && now - run.endedAt < this.graceMs) return;
    this.busy.add(runId);
    try {
      const result = await this.terminator(run);
      this.board.transact((emit, at) => {
        if (result.ended.length > 0) {
          const payload = {
            pids: result.ended,
            sigkill: result.sigkill,
            survived: result.survived,
          };
          emit({ taskId: run.taskId, runId, kind: 'worker_terminated', payload });
        }
        if (!result.survived) this.board.runs.markGone(runId, at);
      });
    } finally {
      this.busy.delete(runId);
    }
  }
}
