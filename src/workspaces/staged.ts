// A worktree's whole state (tracked, changed and untracked files) staged on a copy of its
// index: the worktree's own index, its HEAD and the user's stash are never touched.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  utimesSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { git } from './git.js';

/** The worktree staged whole on an index copy: `env` points git at that copy. */
export interface Staged {
  head: string | null;
  env: Record<string, string>;
}

export async function headOf(path: string): Promise<string | null> {
  const { stdout, code } = await git(path, ['rev-parse', '--verify', '--quiet', 'HEAD'], {
    okCodes: [1],
  });
  return code === 0 ? stdout.trim() : null;
}

/** Where the worktree's index is, and its HEAD (null before a first commit), in one call. */
async function indexAndHead(path: string): Promise<{ index: string; head: string | null }> {
  const { stdout, code } = await git(
    path,
    ['rev-parse', '--path-format=absolute', '--git-path', 'index', 'HEAD'],
    { okCodes: [128] },
  );
  const [index, head] = stdout.split('\n');
  if (!index) throw new Error(`${path} is not a git worktree`);
  return { index: resolve(index), head: code === 0 && head ? head.trim() : null };
}

/**
 * Runs `fn` with the worktree staged whole (`git add --all`, ignored files aside) on a copy of
 * its index, removed after.
 */
export async function withStaged<T>(
  path: string,
  fn: (staged: Staged) => Promise<T>,
  /**
   * A read (a diff) writes nothing into the repository: the objects staging makes go to a
   * scratch store beside the index copy, the repository's borrowed read-only.
   */
  readOnly = false,
): Promise<T> {
  const { index, head } = await indexAndHead(path);
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-index-'));
  const copy = join(dir, 'index');
  try {
    try {
      // A copy keeps the index's stat cache: only what changed is hashed again. It keeps the
      // index's own time too (to the millisecond, never later): git trusts an entry's stat
      // only for a file older than the index, so a file changed in the second of its checkout
      // at the same size is still looked at, as it is with the index itself.
      copyFileSync(index, copy);
      const { atime, mtime } = statSync(index);
      utimesSync(copy, atime, mtime);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const env: Record<string, string> = { GIT_INDEX_FILE: copy };
    if (readOnly) {
      const objects = (
        await git(path, ['rev-parse', '--path-format=absolute', '--git-path', 'objects'])
      ).stdout.trim();
      mkdirSync(join(dir, 'objects'));
      env.GIT_OBJECT_DIRECTORY = join(dir, 'objects');
      env.GIT_ALTERNATE_OBJECT_DIRECTORIES = objects;
    }
    await seeHidden(path, env);
    await git(path, ['add', '--all', '--', '.'], { env });
    return await fn({ head, env });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Clears, on the copy, what hides a tracked file's changes from git (assume-unchanged,
 * skip-worktree): whatever a worker marked so is staged as it is.
 */
async function seeHidden(path: string, env: Record<string, string>): Promise<void> {
  const { stdout } = await git(path, ['ls-files', '-v', '-z'], { env });
  const entries = stdout.split('\0').filter((e) => e.length > 2);
  // Lower case: assume-unchanged. S or s: skip-worktree, left alone where the file is not
  // there (a sparse checkout's). One flag a call: git applies only one of the two at a time.
  const assumed = entries.filter((e) => /^[a-z]/.test(e)).map((e) => e.slice(2));
  const skipped = entries
    .filter((e) => /^[Ss] /.test(e))
    .map((e) => e.slice(2))
    .filter((rel) => existsSync(join(path, rel)));
  for (const [flag, paths] of [
    ['--no-assume-unchanged', assumed],
    ['--no-skip-worktree', skipped],
  ] as const)
    for (let i = 0; i < paths.length; i += 500)
      await git(path, ['update-index', flag, '--', ...paths.slice(i, i + 500)], { env });
}

/** The staged state differs from HEAD: uncommitted or untracked changes. */
export async function stagedDirty(path: string, staged: Staged): Promise<boolean> {
  if (!staged.head) return true;
  const { code } = await git(
    path,
    ['diff', '--no-ext-diff', '--no-textconv', '--cached', '--quiet', staged.head],
    {
      env: staged.env,
      okCodes: [1],
    },
  );
  return code === 1;
}

/** The staged state as a tree object (for a commit that keeps it). */
export async function stagedTree(path: string, staged: Staged): Promise<string> {
  return (await git(path, ['write-tree'], { env: staged.env })).stdout.trim();
}
