// Best of N (docs/attempts.md): a task tried by several attempts side by side, each a task of its
// own; which have ended, and which one the judge picks. Pure.
import type { RunEvidence } from '../../workspaces/types.js';
import type { TaskStatus } from './types.js';

/** What a task given to attempts keeps of them. */
export interface AttemptGroup {
  /** The attempts, in the order they were made. */
  ids: string[];
  /** Run in each attempt's workspace once all have ended, or null: no judge. */
  judge: { command: string[] } | null;
  /** "judge": the best judged attempt is picked without a person. */
  autoPick: 'judge' | null;
  /** The attempt kept, once one is, and the branch its work was kept on. */
  picked: string | null;
  branch: string | null;
}

/** What the judge said of one attempt. */
export interface JudgeResult {
  exitCode: number | null;
  /** The tail of what it printed (stdout and stderr together). */
  output: string;
  at: number;
}

/** Why a task given to attempts may not be moved this way before one is picked, or null. */
export function attemptsUnpicked(task: {
  id: string;
  attempts: AttemptGroup | null;
}): string | null {
  return task.attempts && task.attempts.picked === null
    ? `task ${task.id} is given to attempts: pick one (POST /tasks/${task.id}/attempts/:attemptId/pick)`
    : null;
}

/** An attempt has ended: nothing more comes of it by itself. */
export function attemptEnded(status: TaskStatus): boolean {
  return status === 'done' || status === 'review' || status === 'blocked' || status === 'archived';
}

export interface Candidate {
  id: string;
  status: TaskStatus;
  judge: JudgeResult | null;
  evidence: RunEvidence | null;
}

/**
 * The best judged attempt: its judge passed (exit 0) and it changed something, then the smallest
 * change (insertions + deletions), then the first made; null when none passed.
 */
export function bestAttempt(candidates: readonly Candidate[]): string | null {
  const size = (c: Candidate) => (c.evidence ? c.evidence.insertions + c.evidence.deletions : 0);
  const passed = candidates.filter(
    (c) =>
      (c.status === 'done' || c.status === 'review') &&
      c.judge?.exitCode === 0 &&
      (c.evidence?.filesChanged ?? 0) > 0,
  );
  passed.sort((a, b) => size(a) - size(b));
  return passed[0]?.id ?? null;
}
