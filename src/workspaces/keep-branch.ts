// A worktree's whole state kept on a branch of its own (docs/attempts.md: the picked attempt's
// work): its commits, and its uncommitted and untracked files as one commit on top, the worktree
// itself untouched. A branch of that name that exists already is never moved; one that holds
// this very state already (a pick tried again) is taken as it is.
import { git } from './git.js';
import { stagedDirty, stagedTree, withStaged } from './staged.js';

/** The commit the new branch names. */
export async function keepAsBranch(path: string, branch: string, message: string): Promise<string> {
  const snap = await withStaged(path, async (staged) => ({
    head: staged.head,
    dirty: await stagedDirty(path, staged),
    tree: await stagedTree(path, staged),
  }));
  const existing = await holding(path, branch, snap);
  if (existing !== null) return existing;
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

/** The branch's commit when it holds this state already: the clean head, or its tree on it. */
async function holding(
  path: string,
  branch: string,
  snap: { head: string | null; dirty: boolean; tree: string },
): Promise<string | null> {
  const found = await git(
    path,
    ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`],
    { okCodes: [1] },
  );
  const commit = found.stdout.trim();
  if (!commit) return null;
  if (snap.head !== null && !snap.dirty) return commit === snap.head ? commit : null;
  const [tree, ...parents] = (await git(path, ['show', '-s', '--format=%T %P', commit])).stdout
    .trim()
    .split(' ')
    .filter(Boolean);
  const parentsWanted = snap.head ? [snap.head] : [];
  return tree === snap.tree && parents.join(' ') === parentsWanted.join(' ') ? commit : null;
}
