// What a run did to its worktree: HEAD before and after, and every change against the base,
// committed or not, untracked files included.
import { git } from './git.js';
import { lstat, open } from 'node:fs/promises';
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
async function linesOf(path: string, buffer: Buffer): Promise<number> {
  let file;
  try {
    const st = await lstat(path);
    if (!st.isFile() || st.size > MAX_COUNTED_BYTES) return 0;
    file = await open(path, 'r');
  } catch {
    return 0;
  }
  try {
    // Read a chunk at a time: a file is never held whole.
    let lines = 0;
    let last = 10;
    let at = 0;
    for (;;) {
      const { bytesRead } = await file.read(buffer, 0, buffer.length, at);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      if (at === 0 && chunk.subarray(0, 8000).includes(0)) return 0;
      for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, nl + 1)) lines++;
      last = chunk[bytesRead - 1]!;
      at += bytesRead;
    }
    return at > 0 && last !== 10 ? lines + 1 : lines;
  } catch {
    return 0;
  } finally {
    await file.close();
  }
}

/** Larger untracked files are counted as changed, their lines not counted. */
const MAX_COUNTED_BYTES = 8 * 1024 * 1024;
/** Untracked files read at once, each through a buffer of its own. */
const READERS = 8;
const CHUNK = 64 * 1024;
/** Past this many untracked files, their lines are not counted: the evidence says partial. */
const MAX_COUNTED_FILES = 20_000;

/** The lines of each file, READERS files at a time, in bounded memory; null past the cap. */
async function linesOfAll(dir: string, files: string[]): Promise<number | null> {
  if (files.length > MAX_COUNTED_FILES) return null;
  let next = 0;
  let total = 0;
  await Promise.all(
    Array.from({ length: Math.min(READERS, files.length) }, async () => {
      const buffer = Buffer.allocUnsafe(CHUNK);
      while (next < files.length) {
        // Counted after the await: `total += await …` would add to a stale total.
        const lines = await linesOf(join(dir, files[next++]!), buffer);
        total += lines;
      }
    }),
  );
  return total;
}

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
  const added = await linesOfAll(path, untracked);
  return {
    headBefore,
    headAfter: oid?.[1] ?? null,
    dirty: changed.length > 0,
    filesChanged: counts.filesChanged + untracked.length,
    insertions: counts.insertions + (added ?? 0),
    deletions: counts.deletions,
    ...(added === null ? { partial: true } : {}),
  };
}
