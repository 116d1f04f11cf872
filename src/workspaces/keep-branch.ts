// A worktree's whole state kept on a branch of its own (docs/attempts.md: the picked attempt's
// work): its commits, and its uncommitted and untracked files as one commit on top, the worktree
// itself untouched. A branch of that name that exists already is never moved.
import { git } from './git.js';
import { stagedDirty, stagedTree, withStaged } from './staged.js';

/** The commit the new branch names. */
export async function keepAsBranch(path: string, branch: string, message: string): Promise<string> {
  const snap = await withStaged(path, async (staged) => ({
    head: staged.head,
    dirty: await stagedDirty(path, staged),
    tree: await stagedTree(path, staged),
  }));
  const commit =
    snap.head !== null && !snap.dirty
      ? snap.head
      : (
          await git(path, [
            'commit-tree',
            snap.tree,
            ...(snap.head ? ['-p', snap.head] : []),
            '-m',
            message,
          ])
        ).stdout.trim();
  // `git branch` refuses a name that exists: another branch is never moved.
  await git(path, ['branch', '--', branch, commit]);
  return commit;
}
