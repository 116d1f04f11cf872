// Operator transitions: archive, reclaim and unblock; the winner of a transition terminates the worker.
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../errors.js';
import type { Board } from './board.js';
import { removeRunDir } from './dispatch/run-files.js';
import type { Ownership } from './hosts/ownership.js';
import type { TerminationOutcome, Terminations } from './dispatch/terminations.js';
import type { Host, Task } from './model/types.js';
import { archiveIdle } from './moves/archive.js';
import type { TerminationOp } from './moves/termination.js';
import { unblockTask } from './moves/unblock.js';

/** How often the task of an action carried out by another host is read while waiting. */
const REMOTE_POLL_MS = 100;

export class OperatorActions {
  constructor(
    private readonly board: Board,
    private readonly terminations: Terminations,
    private readonly dataDir: string,
    private readonly ownership: Ownership,
    /** How long an action on another host's worker waits for that host to end it. */
    private readonly remoteWaitMs: number,
  ) {}

  /**
   * Deletes an archived task; its run folders go at once (their logs would answer nothing).
   * The task is gone once this returns: a folder that cannot be removed now is named in the
   * answer and removed later by retention, which removes the folders of runs the board lacks.
   */
  async delete(id: string): Promise<{ foldersLeft: { runId: string; error: string }[] }> {
    const foldersLeft: { runId: string; error: string }[] = [];
    for (const runId of await this.board.delete(id)) {
      try {
        await removeRunDir(this.dataDir, runId);
      } catch (err) {
        foldersLeft.push({ runId, error: (err as Error).message });
      }
    }
    return { foldersLeft };
  }

  /**
   * Archives the task, terminating its worker first if it has one: also when it was claimed
   * between this read and the archive (the operator's word holds whatever the dispatcher did).
   */
  async archive(id: string): Promise<Task> {
    const task = await this.board.get(id);
    if (task.status === 'running') return this.terminate(id, 'archive');
    try {
      return await this.board.transact((tx) => archiveIdle(tx, id));
    } catch (err) {
      if ((await this.board.tasks.get(id))?.status === 'running')
        return this.terminate(id, 'archive');
      throw err;
    }
  }

  /** Releases a running task to ready; a surviving worker keeps the claim unless `force`. */
  async reclaim(id: string, force: boolean): Promise<Task> {
    const task = await this.board.get(id);
    if (task.status !== 'running') {
      throw new AppError(
        'INVALID_TRANSITION',
        `task ${id} is ${task.status}; only running tasks can be reclaimed`,
      );
    }
    return this.terminate(id, force ? 'reclaim_force' : 'reclaim');
  }

  unblock(id: string): Promise<Task> {
    return this.board.transact((tx) => unblockTask(tx, id));
  }

  private async terminate(id: string, op: TerminationOp): Promise<Task> {
    const host = await this.anotherLiveHost(id);
    if (host) return this.terminateThrough(host, id, op);
    let run = await this.terminations.begin(id, op);
    // A tick is retrying a termination that was deferred: the operator's asks after it ends,
    // and again after the next one if a tick began one meanwhile (a busy machine).
    for (let tries = 0; !run && this.terminations.isActive(id) && tries < 20; tries++) {
      await this.terminations.ended(id);
      run = await this.terminations.begin(id, op);
    }
    if (!run) return this.endedMeanwhile(id, op);
    return this.answer(await this.terminations.finish(run, op), op);
  }

  private answer(outcome: TerminationOutcome, op: TerminationOp): Task {
    if (!outcome.deferred) return outcome.task;
    const what = op === 'archive' ? 'archiving' : 'reclaiming';
    throw new AppError(
      'WORKER_SURVIVED',
      `worker pid ${outcome.report.prevPid} survived SIGTERM and SIGKILL; the task keeps its claim and ${what} is retried each tick${op === 'archive' ? '' : ' (reclaim --force releases it anyway)'}`,
    );
  }

  /**
   * The live host other than this one whose worker the task's run is (a shared board), or null.
   * A dead host's runs are nobody's: nothing of them runs.
   */
  private async anotherLiveHost(id: string): Promise<Host | null> {
    const runId = (await this.board.tasks.get(id))?.currentRunId ?? null;
    const run = runId === null ? null : await this.board.runs.get(runId);
    if (!run || this.ownership.owns(run) || run.hostId === null) return null;
    const host = await this.board.hosts.get(run.hostId);
    return host && host.state !== 'dead' ? host : null;
  }

  /**
   * Another host's worker is that host's to end: signalled from here it would not be found, and
   * the task could run twice. The termination is recorded on the board, where that host's next
   * tick finds and carries it out (as after a restart); this waits for the task to settle.
   */
  private async terminateThrough(host: Host, id: string, op: TerminationOp): Promise<Task> {
    const run = await this.terminations.begin(id, op);
    if (!run) return this.endedMeanwhile(id, op);
    const deadline = performance.now() + this.remoteWaitMs;
    for (;;) {
      const task = await this.board.get(id);
      if (task.currentRunId !== run.id) return task;
      if (performance.now() >= deadline)
        throw new AppError(
          'WORKER_SURVIVED',
          `task ${id} runs on host ${host.name} (host ${host.id}), which has not ended its worker within ${Math.round(this.remoteWaitMs / 1000)} s; the termination stays recorded and that host carries it out`,
        );
      await sleep(REMOTE_POLL_MS);
    }
  }

  /**
   * No termination could begin: the run ended meanwhile (its worker completed), and an archive
   * archives the task as it is now; or another termination holds it.
   */
  private async endedMeanwhile(id: string, op: TerminationOp): Promise<Task> {
    if (op === 'archive' && (await this.board.tasks.get(id))?.status !== 'running')
      return this.board.transact((tx) => archiveIdle(tx, id));
    throw await this.busy(id);
  }

  private async busy(id: string): Promise<AppError> {
    const task = await this.board.tasks.get(id);
    return new AppError(
      'INVALID_TRANSITION',
      `task ${id} is ${task?.status ?? 'gone'}${task?.status === 'running' ? ' and its worker is already being terminated' : ''}`,
    );
  }
}
