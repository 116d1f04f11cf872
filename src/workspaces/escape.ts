// Did anything change in the repository's own checkout while a run was live (an agent that
// worked outside its worktree)? Its HEAD and each changed path with its size and time, before
// and after.
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { git } from './git.js';
import { headOf } from './staged.js';

export interface CheckoutState {
  head: string | null;
  /** Path → its status and what the file looks like. */
  entries: Record<string, string>;
}

export async function checkoutState(repoPath: string): Promise<CheckoutState> {
  const head = await headOf(repoPath);
  const { stdout } = await git(repoPath, [
    'status',
    '--porcelain=v1',
    '-z',
    '--untracked-files=all',
    '--ignore-submodules=all',
  ]);
  const entries: Record<string, string> = {};
  const fields = stdout.split('\0');
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (field.length < 4) continue;
    const code = field.slice(0, 2);
    const path = field.slice(3);
    // A rename's source follows it.
    if (code.includes('R') || code.includes('C')) i++;
    let look = 'gone';
    try {
      const st = lstatSync(join(repoPath, path));
      look = `${st.size}:${st.mtimeMs}`;
    } catch {
      // deleted
    }
    entries[path] = `${code}:${look}`;
  }
  return { head, entries };
}

/** The paths that differ between two states of one checkout ("HEAD" when it moved). */
export function changedPaths(before: CheckoutState, after: CheckoutState): string[] {
  const changed = new Set<string>();
  if (before.head !== after.head) changed.add('HEAD');
  for (const [path, look] of Object.entries(after.entries))
    if (before.entries[path] !== look) changed.add(path);
  for (const path of Object.keys(before.entries)) if (!(path in after.entries)) changed.add(path);
  return [...changed].sort();
}
