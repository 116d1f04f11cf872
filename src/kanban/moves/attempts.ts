// Moves of best of N (docs/attempts.md): a task given to N attempts (new tasks made beside it,
// each its own workspace and branch, profile and model), each attempt's judge result, the task
// moved to review once all ended, and the attempt a person (or the judge) picks: the task is done
// with the picked work kept on its own branch, the other attempts archived (their work
// preserved as every archived worktree's is).
import { AppError } from '../../errors.js';
import type { AttemptGroup, JudgeResult } from '../model/attempts.js';
import { awaitsApproval } from '../model/asks.js';
import type { PrSync } from '../model/pull-request.js';
import type { Origin, Task } from '../model/types.js';
import type { WorkspaceRecord } from '../../workspaces/types.js';
import { WRITES } from '../store/records/task-writes.js';
import { applyMove } from './apply.js';
import { archiveIdle } from './archive.js';
import { promoteChildren } from './children.js';
import { createTask } from './create-task.js';
import type { Tx } from './tx.js';

export interface AttemptVariant {
  assignee: string | null;
  model: string | null;
}

export interface AttemptsRequest {
  /** One per attempt, in order. */
  variants: AttemptVariant[];
  judge: { command: string[] } | null;
  autoPick: 'judge' | null;
}

/** Gives a task in todo or ready to its attempts; the task as it is now and the attempts made. */
export async function startAttempts(
  tx: Tx,
  id: string,
  req: AttemptsRequest,
  origin: Origin,
): Promise<{ task: Task; attempts: Task[] }> {
  const task = await tx.store.tasks.get(id);
  if (!task) throw new AppError('TASK_NOT_FOUND', `no task ${id}`);
  if (task.attempts) throw new AppError('INVALID_TRANSITION', `task ${id} has attempts already`);
  if (task.attemptOf)
    throw new AppError(
      'INVALID_TRANSITION',
      `task ${id} is itself an attempt of ${task.attemptOf}`,
    );
  if (task.status !== 'todo' && task.status !== 'ready')
    throw new AppError(
      'INVALID_TRANSITION',
      `task ${id} is ${task.status}: only a task in todo or ready is given to attempts`,
    );
  // Its own branch is where the picked work goes: a task that ran already has it.
  if (task.workspace !== null || (await tx.store.runs.forTask(id)).length > 0)
    throw new AppError(
      'INVALID_TRANSITION',
      `task ${id} has run already: only a task that never ran is given to attempts`,
    );
  const attempts: Task[] = [];
  for (const [i, v] of req.variants.entries()) {
    const made = await createTask(
      tx,
      {
        title: `${task.title} (attempt ${i + 1} of ${req.variants.length})`,
        body: task.body,
        assignee: v.assignee ?? task.assignee,
        model: v.model ?? (v.assignee ? null : task.model),
        // Each waits for what the task waited for: its parents, and a person's approval.
        parents: task.parents,
        needsApproval: awaitsApproval(task.approval),
        repo: task.repo,
        priority: task.priority,
        maxRuntimeSeconds: task.maxRuntimeSeconds,
        maxRetries: task.maxRetries,
        budget: task.budget,
      },
      origin,
    );
    await tx.store[WRITES].change(made.id, { status: made.status }, { attempt_of: id });
    attempts.push({ ...made, attemptOf: id });
  }
  const group: AttemptGroup = {
    ids: attempts.map((a) => a.id),
    judge: req.judge,
    autoPick: req.autoPick,
    picked: null,
    branch: null,
  };
  if (
    !(await applyMove(tx, task, 'await_attempts', {
      details: { attempts: JSON.stringify(group) },
    }))
  )
    throw new AppError('INVALID_TRANSITION', `task ${id} changed while given to attempts`);
  tx.emit({
    taskId: id,
    runId: null,
    kind: 'attempts_started',
    payload: { attempts: group.ids, judge: req.judge !== null, autoPick: req.autoPick },
  });
  return { task: (await tx.store.tasks.get(id))!, attempts };
}

/** Records what the judge said of an attempt. */
export async function recordJudge(tx: Tx, attemptId: string, result: JudgeResult): Promise<void> {
  const attempt = await tx.store.tasks.get(attemptId);
  if (!attempt) return;
  await tx.store[WRITES].change(
    attemptId,
    { status: attempt.status },
    { judge: JSON.stringify(result) },
  );
  tx.emit({
    taskId: attemptId,
    runId: null,
    kind: 'judged',
    payload: { exitCode: result.exitCode, of: attempt.attemptOf ?? '' },
  });
}

/** All its attempts ended (and were judged): the task waits in review for a pick. */
export async function attemptsEnded(tx: Tx, id: string): Promise<boolean> {
  const task = await tx.store.tasks.get(id);
  if (!task || task.awaiting !== 'attempts') return false;
  if (!(await applyMove(tx, task, 'attempts_review'))) return false;
  tx.emit({
    taskId: id,
    runId: null,
    kind: 'attempts_ended',
    payload: { attempts: task.attempts!.ids },
  });
  return true;
}

/**
 * Keeps `attemptId`'s work (already on `branch`, made by the caller before this move): the task is
 * done, the other attempts archived (a running one is left to its run, and archived by the caller).
 */
export async function pickAttempt(
  tx: Tx,
  id: string,
  attemptId: string,
  branch: string | null,
  by: string,
  /** The repository has pull requests: the task's worktree on `branch`, published next. */
  pr: { workspace: WorkspaceRecord; sync: PrSync } | null = null,
): Promise<Task> {
  const task = await tx.store.tasks.get(id);
  if (!task) throw new AppError('TASK_NOT_FOUND', `no task ${id}`);
  const group = task.attempts;
  if (!group || !group.ids.includes(attemptId))
    throw new AppError('VALIDATION_FAILED', `${attemptId} is not an attempt of task ${id}`);
  if (task.status !== 'review' || group.picked !== null)
    throw new AppError(
      'INVALID_TRANSITION',
      `task ${id} is ${task.status}${group.picked ? `, ${group.picked} picked already` : ''}: an attempt is picked once all ended`,
    );
  const picked: AttemptGroup = { ...group, picked: attemptId, branch };
  const moved = pr
    ? // It stays in review, as any task's work does until its pull request decides.
      await tx.store[WRITES].change(
        id,
        { status: 'review', runId: task.currentRunId },
        {
          attempts: JSON.stringify(picked),
          workspace: JSON.stringify(pr.workspace),
          pr_sync: JSON.stringify(pr.sync),
          updated_at: tx.now,
        },
      )
    : await applyMove(tx, task, 'approve', {
        details: { attempts: JSON.stringify(picked), completed_at: tx.now },
      });
  if (!moved)
    throw new AppError('INVALID_TRANSITION', `task ${id} changed while an attempt was picked`);
  tx.emit({
    taskId: id,
    runId: null,
    kind: 'attempt_picked',
    payload: { attempt: attemptId, branch, by, pullRequest: pr !== null },
  });
  for (const other of group.ids) {
    if (other === attemptId) continue;
    const t = await tx.store.tasks.get(other);
    if (t && t.status !== 'archived' && t.status !== 'running') await archiveIdle(tx, other);
  }
  if (!pr) await promoteChildren(tx, id);
  return (await tx.store.tasks.get(id))!;
}
