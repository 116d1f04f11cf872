// Operator transitions: archive, reclaim and unblock; the winner of a transition terminates the worker.
import { AppError } from '../errors.js';
import type { Board } from './board.js';
import type { Terminations } from './run-termination.js';
import { transition } from './transitions.js';
import type { Task } from './types.js';

export class OperatorActions {
  constructor(
    private readonly board: Board,
    private readonly terminations: Terminations,
  ) {}

  async archive(id: string): Promise<Task> {
    const task = this.board.get(id);
    if (task.status === 'running') {
      const run = this.terminations.begin(id, 'archive');
      if (!run) throw this.busy(id);
      return (await this.terminations.finish(run, 'archive')).task;
    }
    return this.board.transact((emit, now) => {
      const current = this.board.get(id);
      if (
        current.status === 'running' ||
        transition(current.status, 'archive', { parentsDone: true }) === null
      ) {
        throw new AppError(
          'INVALID_TRANSITION',
          `task ${id} is ${current.status} and cannot be archived now`,
        );
      }
      if (
        !this.board.tasks.cas(
          id,
          { status: current.status },
          { status: 'archived', updated_at: now, not_before: null },
        )
      ) {
        throw this.busy(id);
      }
      emit({
        taskId: id,
        runId: null,
        kind: 'archived',
        payload: { prevPid: null, terminated: false, sigkill: false, survived: false },
      });
      return this.board.get(id);
    });
  }

  /** Releases a running task to ready; a surviving worker keeps the claim unless `force`. */
  async reclaim(id: string, force: boolean): Promise<Task> {
    const task = this.board.get(id);
    if (task.status !== 'running') {
      throw new AppError(
        'INVALID_TRANSITION',
        `task ${id} is ${task.status}; only running tasks can be reclaimed`,
      );
    }
    const op = force ? 'reclaim_force' : 'reclaim';
    const run = this.terminations.begin(id, op);
    if (!run) throw this.busy(id);
    const outcome = await this.terminations.finish(run, op);
    if (outcome.deferred) {
      throw new AppError(
        'WORKER_SURVIVED',
        `worker pid ${outcome.report.prevPid} survived SIGTERM and SIGKILL; the task keeps its claim and is retried each tick (reclaim --force releases it anyway)`,
      );
    }
    return outcome.task;
  }

  unblock(id: string): Task {
    return this.board.transact((emit, now) => {
      const task = this.board.get(id);
      const parentsDone = task.parents.every((p) => this.board.tasks.get(p)?.status === 'done');
      const to = transition(task.status, 'unblock', { parentsDone });
      if (to === null)
        throw new AppError('INVALID_TRANSITION', `task ${id} is ${task.status}, not blocked`);
      const set = {
        status: to,
        updated_at: now,
        consecutive_failures: 0,
        block_reason: null,
        not_before: null,
      };
      if (!this.board.tasks.cas(id, { status: 'blocked' }, set)) throw this.busy(id);
      emit({ taskId: id, runId: null, kind: 'unblocked', payload: { status: to } });
      return this.board.get(id);
    });
  }

  private busy(id: string): AppError {
    const task = this.board.tasks.get(id);
    return new AppError(
      'INVALID_TRANSITION',
      `task ${id} is ${task?.status ?? 'gone'}${task?.status === 'running' ? ' and its worker is already being terminated' : ''}`,
    );
  }
}
