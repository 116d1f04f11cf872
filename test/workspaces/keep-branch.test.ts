// A worktree's whole state kept on a branch (docs/attempts.md, picking) in a real repository:
// the uncommitted files as one commit, a second keep of the same state answered with the same
// commit (a pick tried again), and a branch holding anything else never moved.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keepAsBranch } from '../../src/workspaces/keep-branch.js';
import { gitOut, makeRepo } from '../helpers/git.js';

describe('keeping a worktree on a branch', () => {
  it('keeps uncommitted work, takes the same state again as it is, and never moves another branch', async () => {
    const repo = makeRepo();
    const head = gitOut(repo, 'rev-parse', 'HEAD');
    writeFileSync(join(repo, 'new.txt'), 'new work\n');
    const kept = await keepAsBranch(repo, 'gatehouse/t1', 'kept');
    expect(gitOut(repo, 'show', `${kept}:new.txt`)).toBe('new work');
    expect(gitOut(repo, 'rev-parse', `${kept}^`)).toBe(head);
    // Nothing changed in the worktree: the same commit, the branch where it was.
    expect(await keepAsBranch(repo, 'gatehouse/t1', 'kept again')).toBe(kept);
    // Changed since: the branch is not moved.
    writeFileSync(join(repo, 'new.txt'), 'other work\n');
    await expect(keepAsBranch(repo, 'gatehouse/t1', 'kept')).rejects.toThrow(/already exists/);
    expect(gitOut(repo, 'rev-parse', 'gatehouse/t1')).toBe(kept);
    // A clean worktree is kept as its head; a person's branch elsewhere is never taken for it.
    gitOut(repo, 'checkout', '--quiet', '--', '.');
    gitOut(repo, 'clean', '--quiet', '-fd');
    gitOut(repo, 'branch', 'theirs', kept);
    await expect(keepAsBranch(repo, 'theirs', 'kept')).rejects.toThrow(/already exists/);
    expect(await keepAsBranch(repo, 'gatehouse/t2', 'kept')).toBe(head);
    expect(await keepAsBranch(repo, 'gatehouse/t2', 'kept')).toBe(head);
  });
});
