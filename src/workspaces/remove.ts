// Removing a task's workspace, only once what it holds exists elsewhere (preserve.ts): the
// answer says what was kept and why the removal was allowed.
import { rmSync } from 'node:fs';
import type { RepoConfig } from '../config/schema.js';
import { git } from './git.js';
import { checkInside } from './paths.js';
import { assertWorktreeOf, nestedRepository, pruneOurs } from './guards.js';
import { preserveScratch, preserveWorktree, type Preservation } from './preserve.js';
import type { WorkspaceRecord } from './types.js';

export interface Removal {
  removed: boolean;
  preserved: Preservation | null;
  /** The task's branch was deleted (it was contained in the base). */
  branchDeleted: boolean;
  why: string;
}

async function branchMerged(repo: RepoConfig, branch: string, base: string): Promise<boolean> {
  const { code } = await git(
    repo.path,
    ['merge-base', '--is-ancestor', `refs/heads/${branch}`, base],
    {
      okCodes: [1, 128],
    },
  );
  return code === 0;
}

export async function removeWorktree(
  root: string,
  repo: RepoConfig,
  record: WorkspaceRecord,
  taskId: string,
): Promise<Removal> {
  const base = record.base!;
  const branch = record.branch!;
  let preserved: Preservation | null = null;
  if (checkInside(root, record.path)) {
    // Kept, not removed, when it is not the repository's worktree any more or holds a
    // repository of its own: what is in those is not in any commit this one could make.
    await assertWorktreeOf(repo, record.path);
    const nested = await nestedRepository(record.path);
    if (nested)
      throw new Error(
        `${record.path} holds a repository of its own at ${nested} (a clone or a submodule), whose history a removal would lose: kept`,
      );
    preserved = await preserveWorktree(record.path, taskId, base);
    // Nothing in it exists only here any more (preserved, or all in the base).
    await git(repo.path, ['worktree', 'remove', '--force', record.path]);
    if (checkInside(root, record.path)) rmSync(record.path, { recursive: true });
  }
  // Removed and kept: what is left to tidy does not undo that (it is said, not thrown).
  const untidy: string[] = [];
  await pruneOurs(repo, root).catch((err: Error) => untidy.push(err.message));
  let branchDeleted = false;
  if (await branchMerged(repo, branch, base).catch(() => false)) {
    await git(repo.path, ['branch', '-D', branch]).then(
      () => (branchDeleted = true),
      (err: Error) => untidy.push(err.message),
    );
  }
  const why = preserved?.kept
    ? `its ${preserved.why} were kept on ${preserved.ref}`
    : (preserved?.why ?? 'it was already gone');
  const said = untidy.length > 0 ? `${why} (left to tidy: ${untidy.join('; ')})` : why;
  return { removed: true, preserved, branchDeleted, why: said };
}

export async function removeScratch(
  root: string,
  record: WorkspaceRecord,
  taskId: string,
): Promise<Removal> {
  let preserved: Preservation | null = null;
  if (checkInside(root, record.path)) {
    preserved = await preserveScratch(root, record.path, taskId);
    if (checkInside(root, record.path)) rmSync(record.path, { recursive: true });
  }
  const why = preserved?.kept
    ? `its files were kept in ${preserved.ref}`
    : (preserved?.why ?? 'it was already gone');
  return { removed: true, preserved, branchDeleted: false, why };
}
