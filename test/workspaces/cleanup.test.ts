// Removal keeps what exists nowhere else, whatever a worker did to its worktree (the workspace
// room, real git): nested repositories, hidden changes, links, other people's worktrees.
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RepoConfig } from '../../src/config/schema.js';
import { removeWorktree } from '../../src/workspaces/remove.js';
import type { WorkspaceRecord } from '../../src/workspaces/types.js';
import { ensureWorktree, finishWorktree } from '../../src/workspaces/worktree.js';
import { ensureRoot } from '../../src/workspaces/paths.js';
import { tempDir } from '../helpers/daemon.js';
import { gitCode, gitOut, makeRepo } from '../helpers/git.js';

const TASK = 't_0000000000aa';

function setUp(extra: Partial<RepoConfig> = {}, files?: Record<string, string>) {
  const path = makeRepo(files);
  const root = join(tempDir(), 'root');
  mkdirSync(root);
  ensureRoot(root);
  const repo: RepoConfig = {
    name: 'app',
    path,
    base: 'main',
    setup: null,
    copy: [],
    push: false,
    escapeCheck: true,
    pr: null,
    ...extra,
  };
  return { repo, root };
}

async function made(repo: RepoConfig, root: string): Promise<WorkspaceRecord> {
  const wt = await ensureWorktree(repo, root, TASK, join(root, TASK));
  await finishWorktree(repo, root, TASK, wt, async () => {});
  return {
    kind: 'worktree',
    path: wt.path,
    repo: 'app',
    branch: wt.branch,
    base: wt.base,
    host: 'h',
    state: 'active',
    preservedRef: null,
  };
}

describe('removing a worktree', () => {
  it('keeps a worktree that holds a repository of its own, with its history', async () => {
    const { repo, root } = setUp();
    const record = await made(repo, root);
    const nested = join(record.path, 'vendor', 'lib');
    mkdirSync(nested, { recursive: true });
    gitOut(nested, 'init', '-q');
    writeFileSync(join(nested, 'only-here.txt'), 'history of its own');
    gitOut(nested, 'add', '.');
    gitOut(nested, '-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-qm', 'nested');
    await expect(removeWorktree(root, repo, record, TASK)).rejects.toThrow(
      /holds a repository of its own at .*vendor\/lib.*: kept/,
    );
    expect(readFileSync(join(nested, 'only-here.txt'), 'utf8')).toBe('history of its own');
    expect(gitOut(nested, 'log', '--format=%s')).toBe('nested');
  });

  it('keeps a change a worker hid from git (assume-unchanged, skip-worktree)', async () => {
    const { repo, root } = setUp();
    const record = await made(repo, root);
    writeFileSync(join(record.path, 'README.md'), '# changed, and hidden\n');
    gitOut(record.path, 'update-index', '--assume-unchanged', 'README.md');
    writeFileSync(join(record.path, 'src', 'app.js'), 'export const hidden = true;\n');
    gitOut(record.path, 'update-index', '--skip-worktree', 'src/app.js');
    expect(gitOut(record.path, 'status', '--porcelain')).toBe('');
    const removal = await removeWorktree(root, repo, record, TASK);
    expect(removal.preserved).toMatchObject({ kept: true });
    const ref = `refs/gatehouse/preserved/${TASK}`;
    expect(gitOut(repo.path, 'show', `${ref}:README.md`)).toBe('# changed, and hidden');
    expect(gitOut(repo.path, 'show', `${ref}:src/app.js`)).toBe('export const hidden = true;');
  });

  it('keeps a worktree whose .git a worker replaced with a repository of its own', async () => {
    const { repo, root } = setUp();
    const record = await made(repo, root);
    writeFileSync(join(record.path, 'work.txt'), 'unsaved');
    // The worker's own `git init` over its worktree.
    const { rmSync } = await import('node:fs');
    rmSync(join(record.path, '.git'));
    gitOut(record.path, 'init', '-q');
    await expect(removeWorktree(root, repo, record, TASK)).rejects.toThrow(
      /no longer a worktree of app/,
    );
    expect(readFileSync(join(record.path, 'work.txt'), 'utf8')).toBe('unsaved');
    expect(
      gitCode(repo.path, 'rev-parse', '--verify', `refs/gatehouse/preserved/${TASK}`),
    ).not.toBe(0);
  });

  it('never copies through a link the branch holds, and never prunes a user’s worktree elsewhere', async () => {
    const outside = tempDir('gatehouse-outside-');
    const { repo, root } = setUp({ copy: ['config/.env'] });
    writeFileSync(join(repo.path, '.gitignore'), '.env\n');
    mkdirSync(join(repo.path, 'config'), { recursive: true });
    writeFileSync(join(repo.path, 'config', '.env'), 'SECRET=1');
    // The branch the worktree is made from has config as a link out of the worktree.
    gitOut(repo.path, 'checkout', '-q', '-b', 'linked');
    const { renameSync } = await import('node:fs');
    renameSync(join(repo.path, 'config'), join(tempDir(), 'moved'));
    symlinkSync(outside, join(repo.path, 'config'));
    gitOut(repo.path, 'add', 'config', '.gitignore');
    gitOut(repo.path, '-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-qm', 'link');
    mkdirSync(join(repo.path, 'config-real'));
    // The user's own worktree on a disk that is not there right now.
    const away = join(tempDir(), 'away');
    gitOut(repo.path, 'worktree', 'add', '-q', '-b', 'mine', away, 'main');
    const { rmSync } = await import('node:fs');
    rmSync(away, { recursive: true });
    const record = await made({ ...repo, base: 'linked', copy: [] }, root);
    const withCopy = { ...repo, base: 'linked' };
    await removeWorktree(root, withCopy, record, TASK);
    await made(withCopy, root);
    expect(existsSync(join(outside, '.env'))).toBe(false);
    expect(gitOut(repo.path, 'worktree', 'list', '--porcelain')).toContain(`worktree ${away}`);
  });
});
