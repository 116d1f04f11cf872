// A repository's `pr` (docs/pull-requests.md): resolved with its defaults, the project read from
// origin's URL, the token read from the daemon's environment once, every mistake named by its key.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { projectOf } from '../../src/config/pull-requests.js';
import { tempDir, writeConfig } from '../helpers/daemon.js';
import { gitOut, makeRepo } from '../helpers/git.js';

function load(pr: object, env: NodeJS.ProcessEnv = { GH_TOKEN: 'ghp_x' }, repo = makeRepo()) {
  const dir = tempDir();
  const config = {
    dataDir: dir,
    workspaces: { repos: { app: { path: repo, pr } } },
  };
  return loadConfig({ config: writeConfig(dir, config) }, env, dir);
}

function refusal(pr: object, env?: NodeJS.ProcessEnv, repo?: string): string {
  try {
    load(pr, env, repo);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('no ConfigError');
}

describe("a repository's pull requests in the config", () => {
  it('resolves GitHub with its defaults, pushes, and keeps the token out of workers', () => {
    const c = load({ provider: 'github', project: 'acme/app', tokenEnv: 'GH_TOKEN' });
    expect(c.workspaces.repos.app!.push).toBe(true);
    expect(c.workspaces.repos.app!.pr).toEqual({
      provider: 'github',
      api: 'https://api.github.com',
      project: 'acme/app',
      tokenEnv: 'GH_TOKEN',
      token: 'ghp_x',
      draft: false,
      doneWhen: 'merged',
      requiredChecks: 'protection',
      noChecksSeconds: 600,
      feedback: {
        checks: true,
        reviews: true,
        maxRounds: 3,
        debounceSeconds: 60,
        from: ['OWNER', 'MEMBER', 'COLLABORATOR'],
      },
      webhookSecretEnv: null,
      webhookSecret: null,
      pollSeconds: 60,
    });
    expect(c.workerEnv.GH_TOKEN).toBeUndefined();
  });

  it("reads the project from origin's URL, https, ssh or scp-like, GitLab's groups too", () => {
    const repo = makeRepo();
    gitOut(repo, 'remote', 'add', 'origin', 'git@gitlab.example.com:group/sub/app.git');
    const c = load({ provider: 'gitlab', tokenEnv: 'GH_TOKEN' }, undefined, repo);
    expect(c.workspaces.repos.app!.pr).toMatchObject({
      project: 'group/sub/app',
      api: 'https://gitlab.com/api/v4',
    });
    expect(projectOf('https://github.com/acme/app.git')).toBe('acme/app');
    expect(projectOf('ssh://git@github.example.com:22/acme/app')).toBe('acme/app');
    expect(projectOf('/srv/git/app.git')).toBeNull();
  });

  it('names each mistake by its key', () => {
    expect(refusal({ provider: 'bitbucket', tokenEnv: 'GH_TOKEN', project: 'a/b' })).toMatch(
      /^workspaces\.repos\.app\.pr\.provider: /,
    );
    expect(refusal({ provider: 'github', project: 'a/b' })).toMatch(
      /^workspaces\.repos\.app\.pr\.tokenEnv: /,
    );
    expect(refusal({ provider: 'github', tokenEnv: 'GH_TOKEN', project: 'a/b' }, {})).toBe(
      'workspaces.repos.app.pr.tokenEnv: the variable GH_TOKEN is not set in the environment',
    );
    expect(refusal({ provider: 'gitea', tokenEnv: 'GH_TOKEN', project: 'a/b' })).toBe(
      "workspaces.repos.app.pr.api: required for gitea: the API's base URL",
    );
    expect(refusal({ provider: 'github', tokenEnv: 'GH_TOKEN' })).toMatch(
      /^workspaces\.repos\.app\.pr\.project: required/,
    );
    expect(
      refusal({
        provider: 'github',
        tokenEnv: 'GH_TOKEN',
        project: 'a/b',
        webhookSecretEnv: 'HOOK',
      }),
    ).toBe(
      'workspaces.repos.app.pr.webhookSecretEnv: the variable HOOK is not set in the environment',
    );
    expect(
      refusal({
        provider: 'github',
        tokenEnv: 'GH_TOKEN',
        project: 'a/b',
        feedback: { from: ['ANYONE'] },
      }),
    ).toMatch(/^workspaces\.repos\.app\.pr\.feedback\.from\.0: /);
    expect(
      refusal({ provider: 'github', tokenEnv: 'GH_TOKEN', project: 'a/b', pollSeconds: 0 }),
    ).toMatch(/^workspaces\.repos\.app\.pr\.pollSeconds: /);
    expect(
      refusal({ provider: 'github', tokenEnv: 'GH_TOKEN', project: 'a/b', token: 'inline' }),
    ).toBe('workspaces.repos.app.pr.token: unknown key');
  });
});
