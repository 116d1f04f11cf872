// Runs between their claim and their worker's recorded spawn: the run folder is being written
// off the event loop, so a termination (an archive, a lost lease) could otherwise look for the
// run's processes, find none and settle the run just before its worker starts. It waits instead.
import type { RunRecord } from '../store/records/run.js';
import type { RunTerminator } from './run-terminator.js';

export class Launching {
  private readonly runs = new Map<string, Promise<unknown>>();

  /** Runs `start` (its folder, the spawn, its record) as the run's launch. */
  async during<T>(runId: string, start: () => Promise<T>): Promise<T> {
    const running = start();
    this.runs.set(runId, running);
    try {
      return await running;
    } finally {
      this.runs.delete(runId);
    }
  }

  /** Resolves once the run is not being launched: its worker is live, or was never started. */
  async settled(runId: string): Promise<void> {
    await this.runs.get(runId)?.catch(() => undefined);
  }

  /**
   * `terminator`, waiting first for the run's launch, then ending the run as recorded since
   * (its leader, when one was started): what it ends is then all there is.
   */
  guard(
    terminator: RunTerminator,
    reread: (runId: string) => Promise<RunRecord | null>,
  ): RunTerminator {
    return async (run, groupHeldUntil) => {
      if (!this.runs.has(run.id)) return terminator(run, groupHeldUntil);
      await this.settled(run.id);
      return terminator((await reread(run.id)) ?? run, groupHeldUntil);
    };
  }
}
