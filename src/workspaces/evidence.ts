// What a run did to its worktree: HEAD before and after, and every change against the base,
// committed or not, untracked files included (a diff stat of the snapshot's tree).
import { git } from './git.js';
import { headOf, snapshot } from './snapshot.js';
import type { RunEvidence } from './types.js';

/** Where the task's branch left the base: the changes are counted from there. */
export async function forkPoint(
  path: string,
  base: string,
  head: string | null,
): Promise<string | null> {
  if (!head) return null;
  const { stdout, code } = await git(path, ['merge-base', base, head], { okCodes: [1] });
  return code === 0 ? stdout.trim() : null;
}

function numstat(text: string): Pick<RunEvidence, 'filesChanged' | 'insertions' | 'deletions'> {
  let filesChanged = 0;
  let insertions = 0;
  let deletions = 0;
  for (const line of text.split('\0')) {
    // "added\tdeleted\tpath" ("-" for a binary file); a rename spans the next two fields.
    const m = /^(\d+|-)\t(\d+|-)\t/.exec(line);
    if (!m) continue;
    filesChanged++;
    if (m[1] !== '-') insertions += Number(m[1]);
    if (m[2] !== '-') deletions += Number(m[2]);
  }
  return { filesChanged, insertions, deletions };
}

export async function runEvidence(
  path: string,
  base: string,
  headBefore: string | null,
): Promise<RunEvidence> {
  const { snap, value } = await snapshot(path, async (s) => {
    const from = await forkPoint(path, base, s.head);
    if (!from) return { filesChanged: 0, insertions: 0, deletions: 0 };
    const { stdout } = await git(path, ['diff', '--no-renames', '--numstat', '-z', from, s.tree]);
    return numstat(stdout);
  });
  return { headBefore, headAfter: snap.head, dirty: snap.dirty, ...value! };
}

export { headOf };
