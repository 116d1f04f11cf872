// What a task carries for the people around it (docs/mcp.md): the question its agent asked, the
// progress it reported, and the approval its first run waits for.

/** A question an agent asked through ask_human, unanswered: its run's completion blocks on it. */
export interface TaskQuestion {
  text: string;
  /** Answers the agent offered, or null: free text. */
  options: string[] | null;
  runId: string;
  askedAt: number;
}

/** The last progress an agent reported (report_progress). */
export interface TaskProgress {
  note: string;
  /** 0–100, or null when it did not say. */
  percent: number | null;
  runId: string;
  at: number;
}

/**
 * A task whose first run waits for a person (approval "before_run"): the revision of what it
 * asks (title, body, assignee, repo, model), and the one a person approved, if any.
 */
export interface TaskApproval {
  revision: number;
  approvedRevision: number | null;
  /** Who approved it (`api`, or `<platform>:<user>`), and when. */
  by: string | null;
  at: number | null;
}

/** Why a blocked task is blocked, when a person must do one particular thing. */
export type BlockKind = 'question' | 'budget';

/** What a task in todo waits for besides its parents (`awaiting` in the API). */
export function awaitingOf(
  status: string,
  approval: TaskApproval | null,
  attempts: { picked: string | null } | null,
): 'approval' | 'attempts' | null {
  if (status !== 'todo') return null;
  // Given to attempts (docs/attempts.md): it waits for them to end and be judged.
  if (attempts && attempts.picked === null) return 'attempts';
  return awaitsApproval(approval) ? 'approval' : null;
}

/** The task waits for a person's approval before its first run. */
export function awaitsApproval(approval: TaskApproval | null): boolean {
  return approval !== null && approval.approvedRevision !== approval.revision;
}
