// A task's git worktree: made on branch gatehouse/<taskId> from the base, kept for every run of
// the task, found again after a restart; a half-made one (the daemon died while making it) is
// never handed to a worker.
import { cpSync, existsSync, lstatSync, rmSync, writeFileSync } from 'node:fs';
import { commonDir, pruneOurs } from './guards.js';
import { join, sep } from 'node:path';
import type { RepoConfig } from '../config/schema.js';
import { git, GitError } from './git.js';
import { checkInside, makingMarker, OutsideRootError } from './paths.js';
import { branchOf } from './types.js';

export interface Worktree {
  path: string;
  branch: string;
  base: string;
  /** Found from an earlier run, or made now: from the task's branch here, origin's, or the base. */
  source: 'found' | 'branch' | 'origin' | 'base';
}

/** The base branch: the configured one, else the checkout's current branch. */
export async function baseOf(repo: RepoConfig): Promise<string> {
  if (repo.base) return repo.base;
  const { stdout, code } = await git(repo.path, ['symbolic-ref', '--quiet', '--short', 'HEAD'], {
    okCodes: [1],
  });
  if (code !== 0 || !stdout.trim())
    throw new Error(
      `repository ${repo.name} (${repo.path}) has a detached HEAD: set workspaces.repos.${repo.name}.base`,
    );
  return stdout.trim();
}

async function branchExists(repoPath: string, branch: string): Promise<boolean> {
  const { code } = await git(
    repoPath,
    ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`],
    {
      okCodes: [1],
    },
  );
  return code === 0;
}

/**
 * Whether `path` is a worktree of `repo`: the task's, whatever its HEAD is now (a run may have
 * left it detached, or in the middle of a rebase, for the next run to finish).
 */
async function isTasksWorktree(repo: RepoConfig, path: string): Promise<boolean> {
  try {
    if (!existsSync(join(path, '.git'))) return false;
    return (await commonDir(path)) === (await commonDir(repo.path));
  } catch {
    return false;
  }
}

/** Whether a link stands anywhere on the way from `top` to `rel` inside it (or at its end). */
function throughLink(top: string, rel: string): boolean {
  let at = top;
  for (const part of rel.split(sep).filter(Boolean)) {
    at = join(at, part);
    try {
      if (lstatSync(at).isSymbolicLink()) return true;
    } catch {
      return false;
    }
  }
  return false;
}

/**
 * Copies the repository's `copy` paths into a new worktree, never over what is there and never
 * through a link the branch holds (a committed `config -> /elsewhere` would take a copied
 * secret out of the worktree).
 */
function copyInto(repo: RepoConfig, path: string): void {
  for (const rel of repo.copy) {
    const from = join(repo.path, rel);
    const to = join(path, rel);
    if (!existsSync(from) || throughLink(path, rel) || existsSync(to)) continue;
    // A link is copied as a link, never followed.
    if (lstatSync(from).isSymbolicLink()) continue;
    cpSync(from, to, {
      recursive: true,
      force: false,
      errorOnExist: false,
      verbatimSymlinks: true,
    });
  }
}

/**
 * The task's worktree at `path`, added if it is not there. Run under the repository's lock. A
 * worktree added here is not ready until finishWorktree has run (its marker says so meanwhile).
 */
export async function ensureWorktree(
  repo: RepoConfig,
  root: string,
  taskId: string,
  path: string,
  /** The task had a workspace before: its branch, if there is one, is gatehouse's. */
  hadOne = false,
): Promise<Worktree> {
  const branch = branchOf(taskId);
  const base = await baseOf(repo);
  const marker = makingMarker(root, taskId);
  // A worktree half made by a daemon that died: its branch was made by gatehouse too.
  const halfMade = existsSync(marker);
  const exists = checkInside(root, path);
  if (exists && !existsSync(marker)) {
    if (await isTasksWorktree(repo, path)) return { path, branch, base, source: 'found' };
    throw new OutsideRootError(
      path,
      `it exists and is not task ${taskId}'s worktree of ${repo.name}`,
    );
  }
  if (exists) {
    // Half made by a daemon that died: never handed to a worker, so it holds only what the
    // base, the copies and setup put there. Made again from the start.
    await git(repo.path, ['worktree', 'remove', '--force', path], { okCodes: [128] });
    if (checkInside(root, path)) rmSync(path, { recursive: true, force: true });
  }
  writeFileSync(marker, `${process.pid}\n`);
  // A pushed branch is taken as origin has it (another host ran the task before).
  const fetched =
    repo.push && !(await branchExists(repo.path, branch)) && (await fetchBranch(repo, branch));
  const local = fetched || (await branchExists(repo.path, branch));
  // A person's branch of that name is theirs: never taken over (and so never deleted).
  if (local && !fetched && !hadOne && !halfMade) {
    rmSync(marker, { force: true });
    throw new Error(
      `a branch ${branch} exists in ${repo.name} that gatehouse did not make: rename it (or delete it if nothing on it matters), then unblock the task`,
    );
  }
  const args = local
    ? ['worktree', 'add', path, branch]
    : ['worktree', 'add', '-b', branch, path, base];
  try {
    await git(repo.path, args);
  } catch (err) {
    // A branch made for a worktree that could not be made is not left behind.
    if (!local && (await branchExists(repo.path, branch)))
      await git(repo.path, ['branch', '-D', branch], { okCodes: [1] });
    if (err instanceof GitError && /invalid reference|not a valid object name/i.test(err.stderr))
      throw new Error(`the base branch "${base}" of repository ${repo.name} does not exist`);
    // git still lists a worktree here that was deleted by hand: forgotten, then made again.
    if (!(err instanceof GitError && /already registered|is a missing/i.test(err.stderr)))
      throw err;
    await pruneOurs(repo, root);
    await git(repo.path, args);
  }
  return { path, branch, base, source: fetched ? 'origin' : local ? 'branch' : 'base' };
}

/**
 * A worktree ensureWorktree added, made ready: the repository's copies, then `prepare` (its
 * setup), outside the repository's lock (four setups of one repository run side by side).
 */
export async function finishWorktree(
  repo: RepoConfig,
  root: string,
  taskId: string,
  made: Worktree,
  prepare: (path: string) => Promise<void>,
): Promise<void> {
  if (made.source === 'found') return;
  copyInto(repo, made.path);
  await prepare(made.path);
  rmSync(makingMarker(root, taskId), { force: true });
}

/**
 * Fetches the task's branch from origin into the same branch here; false only when origin has
 * no such branch. An origin that cannot be asked is an error: making the worktree from the base
 * instead would start the task over beside work origin holds.
 */
async function fetchBranch(repo: RepoConfig, branch: string): Promise<boolean> {
  const ref = `refs/heads/${branch}`;
  const { code } = await git(repo.path, ['ls-remote', '--exit-code', '--heads', 'origin', ref], {
    okCodes: [2],
    timeoutMs: 300_000,
  });
  if (code === 2) return false;
  await git(repo.path, ['fetch', '--quiet', 'origin', `${ref}:${ref}`], { timeoutMs: 300_000 });
  return true;
}

/**
 * Pushes the task's branch to origin (repo.push), never forced: a history the agent rewrote is
 * refused by origin and logged, and what origin has is never overwritten.
 */
export async function pushBranch(repo: RepoConfig, branch: string): Promise<void> {
  const ref = `refs/heads/${branch}`;
  await git(repo.path, ['push', '--quiet', 'origin', `${ref}:${ref}`], { timeoutMs: 300_000 });
}
