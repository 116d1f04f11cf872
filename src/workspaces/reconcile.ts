// What is under the managed root, as git and the file system have it: each directory with the
// repository that lists it as a worktree (if any), its size and whether it holds changes.
// Worktrees git lists under the root whose directory is gone are pruned from git's list.
import { realpathSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { pruneOurs } from './guards.js';
import { walk } from './walk.js';
import { join, resolve } from 'node:path';
import type { RepoConfig } from '../config/schema.js';
import { git } from './git.js';

export interface FoundWorkspace {
  /** The task id its name is, or null (not a workspace gatehouse made: never touched). */
  taskId: string | null;
  path: string;
  kind: 'worktree' | 'scratch' | 'unknown';
  /** The repository that lists it as a worktree, or null. */
  repo: string | null;
  bytes: number;
  /** A worktree with uncommitted or untracked files, or a scratch directory with files. */
  dirty: boolean;
}

const TASK_ID = /^t_[0-9a-f]{12}$/;

/** Bytes under `path`, links counted as themselves and never followed. */
export async function bytesUnder(path: string): Promise<number> {
  let total = 0;
  await walk(path, async (full) => {
    total += (await lstat(full).catch(() => null))?.size ?? 0;
  });
  return total;
}

/**
 * The worktrees `repo` lists under `root` (by their real paths, as git lists them); first
 * forgets gatehouse's own whose directory is gone (never a user's worktree elsewhere).
 */
async function worktreesUnder(repo: RepoConfig, root: string): Promise<Set<string>> {
  await pruneOurs(repo, root);
  const { stdout } = await git(repo.path, ['worktree', 'list', '--porcelain']);
  const realRoot = realpathSync(root);
  const under = new Set<string>();
  for (const line of stdout.split('\n'))
    if (line.startsWith('worktree ')) {
      const path = resolve(line.slice('worktree '.length));
      if (path.startsWith(`${realRoot}/`)) under.add(path);
    }
  return under;
}

async function isDirty(path: string): Promise<boolean> {
  const { stdout } = await git(path, ['status', '--porcelain', '--untracked-files=normal']);
  return stdout.trim() !== '';
}

/** Everything directly under the root (its own .preserved and .making aside). */
export async function scanRoot(root: string, repos: RepoConfig[]): Promise<FoundWorkspace[]> {
  let names: string[];
  try {
    names = (await readdir(root)).filter((n) => !n.startsWith('.'));
  } catch {
    return [];
  }
  const owner = new Map<string, string>();
  for (const repo of repos)
    for (const path of await worktreesUnder(repo, root).catch(() => new Set<string>()))
      owner.set(path, repo.name);
  const found: FoundWorkspace[] = [];
  const realRoot = realpathSync(root);
  for (const name of names.sort()) {
    const path = join(resolve(root), name);
    const st = await lstat(path).catch(() => null);
    if (!st) continue;
    const taskId = TASK_ID.test(name) && st.isDirectory() ? name : null;
    const repo = owner.get(join(realRoot, name)) ?? null;
    const kind = taskId === null ? 'unknown' : repo ? 'worktree' : 'scratch';
    const bytes = st.isDirectory() && !st.isSymbolicLink() ? await bytesUnder(path) : st.size;
    let dirty = false;
    if (kind === 'worktree') dirty = await isDirty(path).catch(() => true);
    else if (kind === 'scratch') dirty = (await readdir(path).catch(() => [])).length > 0;
    found.push({ taskId, path, kind, repo, bytes, dirty });
  }
  return found;
}
