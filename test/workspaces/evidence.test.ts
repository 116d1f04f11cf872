// What a run did, read from a copy of its worktree's index (the workspace room, real git).
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runEvidence } from '../../src/workspaces/evidence.js';
import { worktreeDiff } from '../../src/workspaces/diff.js';
import { tempDir } from '../helpers/daemon.js';
import { gitOut, makeRepo } from '../helpers/git.js';

describe('a worktree’s evidence', () => {
  it('sees a file changed in the second of its checkout, at the same size (git’s racy-clean case)', async () => {
    const repo = makeRepo({ 'a.txt': 'old line\n', 'b.txt': 'kept\n' });
    const path = join(tempDir(), 'wt');
    gitOut(repo, 'worktree', 'add', '-q', '-b', 'task', path, 'main');
    // Right after the checkout: same second, same size.
    writeFileSync(join(path, 'a.txt'), 'new line\n');
    const head = gitOut(path, 'rev-parse', 'HEAD');
    expect(await runEvidence(path, 'main', head)).toEqual({
      headBefore: head,
      headAfter: head,
      dirty: true,
      filesChanged: 1,
      insertions: 1,
      deletions: 1,
    });
    expect(await worktreeDiff(path, 'main')).toContain('+new line');
    // The worktree's own index was not touched.
    expect(gitOut(path, 'diff', '--cached', '--name-only')).toBe('');
  });

  it('reads a diff without writing an object into the repository', async () => {
    const repo = makeRepo({ 'a.txt': 'old\n' });
    const path = join(tempDir(), 'wt');
    gitOut(repo, 'worktree', 'add', '-q', '-b', 'task', path, 'main');
    writeFileSync(join(path, 'a.txt'), 'changed\n');
    writeFileSync(join(path, 'new.txt'), 'untracked and never added\n');
    const objects = () => gitOut(repo, 'count-objects', '-v');
    const before = objects();
    const diff = await worktreeDiff(path, 'main');
    expect(diff).toContain('+untracked and never added');
    expect(diff).toContain('+changed');
    expect(objects()).toBe(before);
  });

  it('counts many untracked files in bounded reads, and says partial past 20,000 of them', async () => {
    const repo = makeRepo();
    const path = join(tempDir(), 'wt');
    gitOut(repo, 'worktree', 'add', '-q', '-b', 'task', path, 'main');
    const head = gitOut(path, 'rev-parse', 'HEAD');
    mkdirSync(join(path, 'few'));
    for (let i = 0; i < 300; i++) writeFileSync(join(path, 'few', `${i}.txt`), 'a\nb\n');
    const few = await runEvidence(path, 'main', head);
    expect(few).toMatchObject({ filesChanged: 300, insertions: 600 });
    expect(few.partial).toBeUndefined();
    mkdirSync(join(path, 'many'));
    for (let i = 0; i < 20_001; i++) writeFileSync(join(path, 'many', `${i}`), 'x\n');
    expect(readdirSync(join(path, 'many'))).toHaveLength(20_001);
    const many = await runEvidence(path, 'main', head);
    expect(many).toMatchObject({ dirty: true, filesChanged: 20_301, partial: true });
  });

  it('cuts a diff past its bound with a marker, at a line', async () => {
    const repo = makeRepo();
    const path = join(tempDir(), 'wt');
    gitOut(repo, 'worktree', 'add', '-q', '-b', 'task', path, 'main');
    writeFileSync(join(path, 'big.txt'), 'x'.repeat(100) + '\n'.repeat(1) + 'y\n'.repeat(5000));
    const diff = await worktreeDiff(path, 'main', 4096);
    expect(Buffer.byteLength(diff)).toBeLessThanOrEqual(4096);
    expect(diff).toMatch(/\n# gatehouse: the diff is longer than 4096 bytes and was cut here\n$/);
  });
});
