// What the board records of a forge's pull request, and the events that say what happened.
import type { ForgeProvider } from '../config/schema.js';
import type { ForgePr } from '../forges/types.js';
import type { NewEvent } from '../kanban/model/events.js';
import type { TaskPr } from '../kanban/model/pull-request.js';

/** The task's PR as the API shows it, from the forge's answer (checks and review kept). */
export function taskPr(
  provider: ForgeProvider,
  pr: ForgePr,
  prev: TaskPr | null,
  now: number,
): TaskPr {
  const sameHead = prev !== null && prev.headSha === pr.headSha;
  return {
    provider,
    number: pr.number,
    url: pr.url,
    state: pr.state,
    draft: pr.draft,
    headSha: pr.headSha,
    checks: sameHead ? prev.checks : 'pending',
    review: prev?.review ?? 'none',
    rounds: prev?.rounds ?? 0,
    syncedAt: now,
  };
}

/** Events are the task's, of no run. */
export function prEvent<K extends NewEvent['kind']>(
  taskId: string,
  kind: K,
  payload: NewEvent<K>['payload'],
): NewEvent<K> {
  return { taskId, runId: null, kind, payload };
}
