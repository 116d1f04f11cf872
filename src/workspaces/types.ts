// What the board keeps of a task's workspace and of each run in it (docs/workspaces.md).

export type WorkspaceKind = 'scratch' | 'worktree';
export type WorkspaceState = 'active' | 'preserved' | 'removed';

/** A task's workspace, as GET /tasks/:id shows it. */
export interface WorkspaceRecord {
  kind: WorkspaceKind;
  path: string;
  /** The repository's name in workspaces.repos (a worktree), else null. */
  repo: string | null;
  branch: string | null;
  base: string | null;
  /** The host that made it (cluster.hostName). */
  host: string;
  state: WorkspaceState;
  /** Where its content was kept before it was removed (a ref, or a tar for scratch). */
  preservedRef: string | null;
}

/** What one run did to its workspace: changes against the base, committed or not. */
export interface RunEvidence {
  headBefore: string | null;
  headAfter: string | null;
  dirty: boolean;
  filesChanged: number;
  insertions: number;
  deletions: number;
  /** Too many untracked files for their lines to be counted: insertions are a floor. */
  partial?: boolean;
}

export const WORKSPACE_KINDS: readonly WorkspaceKind[] = ['scratch', 'worktree'];
export const WORKSPACE_STATES: readonly WorkspaceState[] = ['active', 'preserved', 'removed'];

/** A task's branch. */
export const branchOf = (taskId: string) => `gatehouse/${taskId}`;
/** Where a worktree's content is kept before it is removed. */
export const preservedRefOf = (taskId: string) => `refs/gatehouse/preserved/${taskId}`;
