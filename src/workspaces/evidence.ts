// What a run did to its worktree: HEAD before and after, and every change against the base,
// committed or not, untracked files included.
import { git } from './git.js';
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
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

/** Lines of an untracked file as git's numstat counts them; a binary file counts none. */
async function linesOf(path: string): Promise<number> {
  let text: Buffer;
  try {
    const st = await lstat(path);
    if (!st.isFile() || st.size > MAX_COUNTED_BYTES) return 0;
    text = await readFile(path);
  } catch {
    return 0;
  }
  if (text.subarray(0, 8000).includes(0)) return 0;
  let lines = 0;
  for (let at = text.indexOf(10); at !== -1; at = text.indexOf(10, at + 1)) lines++;
  return text.length > 0 && text[text.length - 1] !== 10 ? lines + 1 : lines;
}

/** Larger untracked files are counted as changed, their lines not counted. */
const MAX_COUNTED_BYTES = 8 * 1024 * 1024;

/**
 * Read-only, from the worktree's own index (git's racy-clean rules apply as they do for the
 * worker's git): the change of tracked files since the fork point in one pass, and what is
 * uncommitted or untracked in another, side by side; untracked files' lines counted here.
 */
export async function runEvidence(
  path: string,
  base: string,
  headBefore: string | null,
): Promise<RunEvidence> {
  const tracked = forkPoint(path, base, 'HEAD').then((from) =>
    from
      ? git(path, [
          'diff',
          '--no-ext-diff',
          '--no-textconv',
          '--no-renames',
          '--numstat',
          '-z',
          from,
        ]).then((r) => r.stdout)
      : '',
  );
  const status = git(path, [
    'status',
    '--porcelain=v2',
    '--branch',
    '-z',
    '--untracked-files=all',
    '--no-renames',
  ]);
  const [changes, { stdout }] = await Promise.all([tracked, status]);
  const entries = stdout.split('\0').filter(Boolean);
  const oid = /^# branch\.oid ([0-9a-f]{40,64})$/.exec(
    entries.find((e) => e.startsWith('# branch.oid ')) ?? '',
  );
  const changed = entries.filter((e) => !e.startsWith('# '));
  const untracked = changed.filter((e) => e.startsWith('? ')).map((e) => e.slice(2));
  const counts = numstat(changes);
  const added = await Promise.all(untracked.map((rel) => linesOf(join(path, rel))));
  return {
    headBefore,
    headAfter: oid?.[1] ?? null,
    dirty: changed.length > 0,
    filesChanged: counts.filesChanged + untracked.length,
    insertions: counts.insertions + added.reduce((a, b) => a + b, 0),
    deletions: counts.deletions,
  };
}
