// A worktree's whole state (tracked, changed and untracked files) as a git tree, made on a copy
// of its index: the worktree's own index, its HEAD and the user's stash are never touched.
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { git } from './git.js';

export interface Snapshot {
  head: string | null;
  /** The tree of everything in the worktree (ignored files aside). */
  tree: string;
  /** The tree differs from HEAD's: uncommitted or untracked changes. */
  dirty: boolean;
}

/** Runs `fn` with GIT_INDEX_FILE set to a copy of the worktree's index, removed after. */
export async function withIndexCopy<T>(
  path: string,
  fn: (env: Record<string, string>) => Promise<T>,
): Promise<T> {
  const { stdout } = await git(path, [
    'rev-parse',
    '--path-format=absolute',
    '--git-path',
    'index',
  ]);
  const index = resolve(stdout.trim());
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-index-'));
  const copy = join(dir, 'index');
  try {
    // A copy keeps the index's stat cache: only what changed is hashed again. It keeps the
    // index's own time too, a second earlier: git trusts an entry's stat only when the file is
    // older than the index, so a file changed in the second of its checkout (same size, same
    // second) is still looked at, as it is with the index itself.
    if (existsSync(index)) {
      copyFileSync(index, copy);
      const { mtimeMs } = statSync(index);
      const at = Math.floor(mtimeMs / 1000) - 1;
      utimesSync(copy, at, at);
    }
    return await fn({ GIT_INDEX_FILE: copy });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function headOf(path: string): Promise<string | null> {
  const { stdout, code } = await git(path, ['rev-parse', '--verify', '--quiet', 'HEAD'], {
    okCodes: [1],
  });
  return code === 0 ? stdout.trim() : null;
}

/** The worktree's state now. `then` runs with the index copy still in place. */
export async function snapshot<T = void>(
  path: string,
  then?: (snap: Snapshot, env: Record<string, string>) => Promise<T>,
): Promise<{ snap: Snapshot; value: T | undefined }> {
  const head = await headOf(path);
  return withIndexCopy(path, async (env) => {
    await git(path, ['add', '--all', '--', '.'], { env });
    const tree = (await git(path, ['write-tree'], { env })).stdout.trim();
    const headTree = head ? (await git(path, ['rev-parse', `${head}^{tree}`])).stdout.trim() : null;
    const snap = { head, tree, dirty: tree !== headTree };
    return { snap, value: then ? await then(snap, env) : undefined };
  });
}
