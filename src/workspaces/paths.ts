// The managed root: gatehouse makes and removes directories strictly inside it, checked on the
// lexical and on the resolved path, and never by following a link.
import { lstatSync, mkdirSync, realpathSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';

const TASK_ID = /^t_[0-9a-f]{12}$/;

export class OutsideRootError extends Error {
  constructor(path: string, why: string) {
    super(`${path} is not a workspace gatehouse may touch: ${why}`);
    this.name = 'OutsideRootError';
  }
}

/** `<root>/<taskId>`; anything but a task id is refused. */
export function workspacePath(root: string, taskId: string): string {
  if (!TASK_ID.test(taskId)) throw new OutsideRootError(taskId, 'not a task id');
  return join(resolve(root), taskId);
}

/** Creates the root (and its private folders) once. */
export function ensureRoot(root: string): void {
  mkdirSync(join(root, '.preserved'), { recursive: true });
  mkdirSync(join(root, '.making'), { recursive: true });
}

/**
 * Throws unless `path` is a direct child of `root`, lexically and once every link above it is
 * resolved, and is not itself a link. Returns whether it exists.
 */
export function checkInside(root: string, path: string): boolean {
  const lexicalRoot = resolve(root);
  const lexical = resolve(path);
  if (dirname(lexical) !== lexicalRoot || !lexical.startsWith(`${lexicalRoot}${sep}`))
    throw new OutsideRootError(path, `not directly inside ${lexicalRoot}`);
  let realRoot: string;
  let realParent: string;
  try {
    realRoot = realpathSync(lexicalRoot);
    realParent = realpathSync(dirname(lexical));
  } catch (err) {
    throw new OutsideRootError(path, (err as Error).message);
  }
  if (realParent !== realRoot) throw new OutsideRootError(path, 'its folder resolves elsewhere');
  try {
    const stat = lstatSync(lexical);
    if (stat.isSymbolicLink()) throw new OutsideRootError(path, 'it is a symbolic link');
    if (!stat.isDirectory()) throw new OutsideRootError(path, 'it is not a directory');
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** The marker of a workspace being made: present only until it is ready for a worker. */
export function makingMarker(root: string, taskId: string): string {
  return join(resolve(root), '.making', taskId);
}

export function preservedTar(root: string, taskId: string): string {
  return join(resolve(root), '.preserved', `${taskId}.tar`);
}
