// workspaces.* and a profile's workspace (docs/workspaces.md): resolved, and every mistake named by its key.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { tempDir, writeConfig } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/git.js';

function load(config: object) {
  const dir = tempDir();
  return loadConfig({ config: writeConfig(dir, { dataDir: dir, ...config }) }, {}, dir);
}

function refusal(config: object): { key: string; message: string } {
  try {
    load(config);
  } catch (err) {
    if (err instanceof ConfigError) return { key: err.key, message: err.message };
    throw err;
  }
  throw new Error('no ConfigError');
}

const worktreeProfile = (extra: object = {}) => ({
  workers: {
    defaultProfile: 'agent',
    profiles: { agent: { command: ['/bin/true'], workspace: 'worktree', repo: 'app', ...extra } },
  },
});

describe('workspaces in the config', () => {
  it('defaults to no repositories, a root in the data dir, 14 days and a 1 GiB floor; profiles keep their cwd', () => {
    const c = load({});
    expect(c.workspaces).toEqual({
      root: join(c.dataDir, 'workspaces'),
      repos: {},
      keepDays: 14,
      minFreeBytes: 1024 ** 3,
    });
    expect(c.workers.profiles.demo).toMatchObject({ workspace: 'none', repo: null });
  });

  it('resolves a repository and a worktree profile', () => {
    const repo = makeRepo();
    const c = load({
      ...worktreeProfile(),
      workspaces: { repos: { app: { path: repo, copy: ['.env'] } } },
    });
    expect(c.workspaces.repos.app).toEqual({
      name: 'app',
      path: repo,
      base: null,
      setup: null,
      copy: ['.env'],
      push: false,
      escapeCheck: true,
      pr: null,
    });
    expect(c.workers.profiles.agent).toMatchObject({ workspace: 'worktree', repo: 'app' });
  });

  it('names the key of every mistake', () => {
    const repo = makeRepo();
    const plain = tempDir();
    const repos = (app: object) => ({ workspaces: { repos: { app: { path: repo, ...app } } } });
    const cases: [object, string, RegExp][] = [
      [
        { ...worktreeProfile({ repo: undefined }), ...repos({}) },
        'workers.profiles.agent.repo',
        /required/,
      ],
      [
        { ...worktreeProfile({ repo: 'other' }), ...repos({}) },
        'workers.profiles.agent.repo',
        /no repository "other"/,
      ],
      [
        { ...worktreeProfile({ workspace: 'scratch' }), ...repos({}) },
        'workers.profiles.agent.repo',
        /only a profile with workspace "worktree"/,
      ],
      [
        { ...worktreeProfile({ workspace: 'tmp' }), ...repos({}) },
        'workers.profiles.agent.workspace',
        /./,
      ],
      [
        { ...worktreeProfile(), ...repos({ path: plain }) },
        'workspaces.repos.app.path',
        /not a git repository/,
      ],
      [
        { ...worktreeProfile(), ...repos({ path: join(plain, 'nowhere') }) },
        'workspaces.repos.app.path',
        /not a directory/,
      ],
      [
        { ...worktreeProfile(), ...repos({ base: '--upload-pack=evil' }) },
        'workspaces.repos.app.base',
        /must not start with "-"/,
      ],
      [{ ...worktreeProfile(), ...repos({ base: 'a..b' }) }, 'workspaces.repos.app.base', /./],
      [
        { ...worktreeProfile(), ...repos({ copy: ['../secrets'] }) },
        'workspaces.repos.app.copy.0',
        /inside the repository/,
      ],
      [
        { ...worktreeProfile(), ...repos({ copy: ['/etc/passwd'] }) },
        'workspaces.repos.app.copy.0',
        /inside the repository/,
      ],
      [{ ...worktreeProfile(), ...repos({ setup: [] }) }, 'workspaces.repos.app.setup', /./],
      [
        { ...worktreeProfile(), ...repos({ bogus: 1 }) },
        'workspaces.repos.app.bogus',
        /unknown key/,
      ],
      [
        { ...worktreeProfile(), workspaces: { repos: { app: { path: repo } }, root: repo } },
        'workspaces.root',
        /must not contain one another/,
      ],
      [
        {
          ...worktreeProfile(),
          workspaces: { repos: { app: { path: repo } }, root: join(repo, 'wt') },
        },
        'workspaces.root',
        /must not contain one another/,
      ],
      [{ workspaces: { keepDays: -1 } }, 'workspaces.keepDays', /at least 0/],
      [{ workspaces: { repos: { 'bad name': { path: repo } } } }, 'workspaces.repos.bad name', /./],
    ];
    for (const [config, key, message] of cases) {
      const got = refusal(config);
      expect(got.key, JSON.stringify(config)).toBe(key);
      expect(got.message).toMatch(message);
    }
  });
});
