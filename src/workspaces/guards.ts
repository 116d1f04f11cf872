// What must hold before a worktree's content is kept or its directory removed: it is a worktree
// of its own repository (not a repository an agent made, nor one above the root), it holds no
// repository of its own inside (a clone, a submodule: their history would be lost), and only
// gatehouse's own worktrees are ever pruned from a repository's list.
import { existsSync, readFileSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { RepoConfig } from '../config/schema.js';
import { git } from './git.js';
import { checkInside } from './paths.js';
import { walk } from './walk.js';

/** The repository's common git directory, resolved: what all its worktrees share. */
export async function commonDir(path: string): Promise<string> {
  const { stdout } = await git(path, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
  return resolve(stdout.trim());
}

/** Throws unless `path` is a worktree of `repo` (its .git file leads to repo's git directory). */
export async function assertWorktreeOf(repo: RepoConfig, path: string): Promise<void> {
  const found = existsSync(join(path, '.git')) ? await commonDir(path).catch(() => null) : null;
  if (found === null || found !== (await commonDir(repo.path)))
    throw new Error(
      `${path} is no longer a worktree of ${repo.name} (its .git was removed or replaced): kept as it is`,
    );
}

/** The first repository (a .git directory or file) inside the worktree, below its top, or null. */
export async function nestedRepository(path: string): Promise<string | null> {
  let found: string | null = null;
  await walk(path, (full, entry, dir) => {
    if (entry.name === '.git' && dir !== path) found = dirname(full);
    return found !== null;
  });
  return found;
}

/** A worktree directly under the root (by its lexical or its real path) that is gone. */
function oursAndGone(root: string, worktree: string): boolean {
  for (const r of [root, realpathSync(root)]) {
    try {
      return !checkInside(r, worktree);
    } catch {
      // not under this spelling of the root
    }
  }
  return false;
}

/**
 * Forgets the repository's worktrees under the root whose directory is gone (deleted by hand):
 * what `git worktree prune` does, for gatehouse's own only. A user's worktree elsewhere (on a
 * disk not mounted now) is never touched; neither is a locked one.
 */
export async function pruneOurs(repo: RepoConfig, root: string): Promise<number> {
  const admin = join(await commonDir(repo.path), 'worktrees');
  let names: string[];
  try {
    names = readdirSync(admin);
  } catch {
    return 0;
  }
  let pruned = 0;
  for (const name of names) {
    let gitdir: string;
    try {
      gitdir = readFileSync(join(admin, name, 'gitdir'), 'utf8').trim();
    } catch {
      continue;
    }
    if (!oursAndGone(root, dirname(resolve(gitdir)))) continue;
    if (existsSync(join(admin, name, 'locked'))) continue;
    rmSync(join(admin, name), { recursive: true, force: true });
    pruned++;
  }
  return pruned;
}
