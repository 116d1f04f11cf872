// Before a workspace goes, what it holds that exists nowhere else is kept: a worktree's whole
// state as a commit on refs/gatehouse/preserved/<taskId> in its repository, a scratch
// directory's files as <root>/.preserved/<taskId>.tar.
import { systemClock } from '../clock.js';
import { execFile } from 'node:child_process';
import { readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { promisify } from 'node:util';
import { git } from './git.js';
import { preservedTar } from './paths.js';
import { stagedDirty, stagedTree, withStaged } from './staged.js';
import { preservedRefOf } from './types.js';

export type Preservation =
  { kept: false; why: string } | { kept: true; ref: string; commit: string; why: string };

async function contains(path: string, base: string, commit: string): Promise<boolean> {
  const { code } = await git(path, ['merge-base', '--is-ancestor', commit, base], { okCodes: [1] });
  return code === 0;
}

async function refCommit(path: string, ref: string): Promise<string | null> {
  const { stdout, code } = await git(
    path,
    ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`],
    {
      okCodes: [1],
    },
  );
  return code === 0 ? stdout.trim() : null;
}

/**
 * Keeps the worktree's state when anything in it is not in `base`: commits not merged,
 * uncommitted or untracked files (ignored ones aside). An earlier preserved state of the task
 * stays reachable from the new one.
 */
export async function preserveWorktree(
  path: string,
  taskId: string,
  base: string,
): Promise<Preservation> {
  const ref = preservedRefOf(taskId);
  const snap = await withStaged(path, async (staged) => ({
    head: staged.head,
    dirty: await stagedDirty(path, staged),
    tree: await stagedTree(path, staged),
  }));
  const merged = snap.head !== null && (await contains(path, base, snap.head));
  if (!snap.dirty && merged) return { kept: false, why: `everything in it is in ${base}` };
  const parents: string[] = [];
  if (snap.head) parents.push(snap.head);
  const earlier = await refCommit(path, ref);
  if (earlier && !(snap.head && (await contains(path, snap.head, earlier)))) parents.push(earlier);
  const why = snap.dirty ? 'uncommitted or untracked files' : `commits not in ${base}`;
  const message = `gatehouse: the state of task ${taskId}'s worktree before its removal (${why})`;
  const commit = (
    await git(path, ['commit-tree', snap.tree, ...parents.flatMap((p) => ['-p', p]), '-m', message])
  ).stdout.trim();
  await git(path, ['update-ref', '-m', message, ref, commit]);
  // Proven, not assumed: the ref names the commit, and the commit its tree.
  if ((await refCommit(path, ref)) !== commit) throw new Error(`${ref} does not hold ${commit}`);
  return { kept: true, ref, commit, why };
}

const run = promisify(execFile);

/** Keeps a scratch directory's files as a tar beside the root's workspaces, links as links. */
export async function preserveScratch(
  root: string,
  path: string,
  taskId: string,
): Promise<Preservation> {
  if (readdirSync(path).length === 0) return { kept: false, why: 'it is empty' };
  // A name of its own each time (an earlier tar of the task is never overwritten), written
  // whole before it is given that name.
  const tar = preservedTar(root, `${taskId}-${systemClock.wall()}`);
  const partial = `${tar}.partial`;
  try {
    await run('tar', ['-cf', partial, '-C', dirname(path), basename(path)], { timeout: 600_000 });
    if (!statSync(partial).isFile() || statSync(partial).size === 0)
      throw new Error(`${tar} was not written`);
    renameSync(partial, tar);
  } finally {
    rmSync(partial, { force: true });
  }
  return { kept: true, ref: tar, commit: '', why: 'its files' };
}
