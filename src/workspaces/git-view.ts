// A sandboxed run's view of its worktree's git (docs/sandbox.md): the repository's shared git
// directory read-only (its config, hooks, info, other branches and every object that existed),
// the worktree's own git directory writable, and beside them a task's own object store (borrowing
// the repository's objects, read-only, as an alternate) and its own branch's ref and reflog. Its
// commits land there; after the run the daemon fetches them into the repository and moves the
// branch, so nothing a run does reaches another branch, another worktree or an existing object.
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Mount } from '../sandbox/view.js';
import { git } from './git.js';

/** Where the task's own git parts are kept, beside its worktree under the managed root. */
export const gitViewDir = (root: string, taskId: string) => join(root, '.gitview', taskId);

interface Dirs {
  /** The repository's shared git directory (the worktree's common dir). */
  common: string;
  /** The worktree's own git directory. */
  own: string;
  /** The branch's folder of loose refs, and of reflogs, in the shared directory. */
  refsDir: string;
  logsDir: string;
}

async function dirsOf(worktree: string, branch: string): Promise<Dirs> {
  const { stdout } = await git(worktree, [
    'rev-parse',
    '--path-format=absolute',
    '--git-common-dir',
    '--absolute-git-dir',
  ]);
  const [common, own] = stdout.trim().split('\n');
  const folder = dirname(branch);
  return {
    common: common!,
    own: own!,
    refsDir: join(common!, 'refs', 'heads', folder),
    logsDir: join(common!, 'logs', 'refs', 'heads', folder),
  };
}

/** The name and address the run's commits are made with: the repository's own, else gatehouse's. */
async function identity(worktree: string): Promise<Record<string, string>> {
  const read = async (key: string) =>
    (await git(worktree, ['config', '--get', key], { okCodes: [1] })).stdout.trim();
  const [name, email] = await Promise.all([read('user.name'), read('user.email')]);
  const who = { name: name || 'gatehouse', email: email || 'gatehouse@localhost' };
  return {
    GIT_AUTHOR_NAME: who.name,
    GIT_AUTHOR_EMAIL: who.email,
    GIT_COMMITTER_NAME: who.name,
    GIT_COMMITTER_EMAIL: who.email,
  };
}

/**
 * Makes the task's git view for a run: its object store (new, or emptied by the last absorb)
 * borrowing the repository's, and its branch's ref as the repository has it now. The mounts that
 * put them in place inside the sandbox, and the identity its commits are made with (the daemon
 * user's git config is not inside).
 */
export async function prepareGitView(
  root: string,
  taskId: string,
  worktree: string,
  branch: string,
): Promise<{ mounts: Mount[]; env: Record<string, string> }> {
  const view = gitViewDir(root, taskId);
  const dirs = await dirsOf(worktree, branch);
  const head = (
    await git(dirs.common, ['rev-parse', '--verify', `refs/heads/${branch}^{commit}`])
  ).stdout.trim();
  for (const dir of ['objects/info', 'shared', 'refs', 'logs'])
    mkdirSync(join(view, dir), { recursive: true });
  // Inside, `shared` is the repository's objects (read-only); outside it is empty and the
  // repository's own path serves, so one file reads right on both sides of the sandbox.
  writeFileSync(
    join(view, 'objects', 'info', 'alternates'),
    `${join(view, 'shared')}\n${join(dirs.common, 'objects')}\n`,
  );
  writeFileSync(join(view, 'refs', basename(branch)), `${head}\n`);
  // The mount points must exist on the host (its root is read-only inside).
  mkdirSync(dirs.refsDir, { recursive: true });
  mkdirSync(dirs.logsDir, { recursive: true });
  const mounts: Mount[] = [
    { op: 'read', src: dirs.common, dest: dirs.common },
    { op: 'write', src: dirs.own, dest: dirs.own },
    { op: 'write', src: join(view, 'objects'), dest: join(dirs.common, 'objects') },
    // Its alternates say where objects are borrowed from: not the run's to change.
    { op: 'read', src: join(view, 'objects', 'info'), dest: join(dirs.common, 'objects', 'info') },
    { op: 'write', src: join(view, 'refs'), dest: dirs.refsDir },
    { op: 'write', src: join(view, 'logs'), dest: dirs.logsDir },
    { op: 'read', src: join(dirs.common, 'objects'), dest: join(view, 'shared') },
  ];
  return { mounts, env: await identity(worktree) };
}

/**
 * After a run in the view: its branch's commits fetched into the repository (as any fetch does,
 * checked on the way in) and the branch moved to them, only from where it was; then the view's
 * object store emptied. Nothing when the run committed nothing; false if the branch moved
 * meanwhile (its commits stay in the view, fetched again after the next run).
 */
export async function absorbGitView(
  root: string,
  taskId: string,
  worktree: string,
  branch: string,
): Promise<boolean> {
  const view = gitViewDir(root, taskId);
  const refFile = join(view, 'refs', basename(branch));
  if (!existsSync(refFile)) return true;
  const dirs = await dirsOf(worktree, branch);
  const ref = `refs/heads/${branch}`;
  const wanted = readFileSync(refFile, 'utf8').trim();
  const now = (await git(dirs.common, ['rev-parse', '--verify', ref])).stdout.trim();
  if (/^[0-9a-f]{40,64}$/.test(wanted) && wanted !== now) {
    const shim = join(view, 'shim.git');
    if (!existsSync(shim)) {
      mkdirSync(join(shim, 'refs', 'heads', dirname(branch)), { recursive: true });
      writeFileSync(join(shim, 'HEAD'), `ref: ${ref}\n`);
      writeFileSync(join(shim, 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = true\n');
      symlinkSync(join(view, 'objects'), join(shim, 'objects'));
      rmSync(join(shim, 'refs', 'heads', dirname(branch)), { recursive: true });
      symlinkSync(join(view, 'refs'), join(shim, 'refs', 'heads', dirname(branch)));
    }
    await git(dirs.common, ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', shim, ref]);
    await git(dirs.common, ['cat-file', '-e', `${wanted}^{commit}`]);
    const moved = await git(dirs.common, ['update-ref', ref, wanted, now], { okCodes: [1, 128] });
    if (moved.code !== 0) return false;
  }
  await emptyObjects(join(view, 'objects'));
  return true;
}

/** The view's own objects, once fetched into the repository: its alternates stay. */
async function emptyObjects(objects: string): Promise<void> {
  for (const name of await readdir(objects).catch(() => [] as string[]))
    if (name !== 'info') rmSync(join(objects, name), { recursive: true, force: true });
}

/** The task's git view, gone with its workspace. */
export function removeGitView(root: string, taskId: string): void {
  rmSync(gitViewDir(root, taskId), { recursive: true, force: true });
}
