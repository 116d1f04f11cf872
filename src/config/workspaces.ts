// workspaces.* and each profile's workspace, resolved and checked against each other (docs/workspaces.md).
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, join, normalize, resolve, sep } from 'node:path';
import { resolvePullRequests } from './pull-requests.js';
import type { Profile, RawConfig, RepoConfig, WorkspacesConfig } from './schema.js';

type Fail = (key: string, message: string) => Error;

/** A branch name git takes and that no argument parser could read as an option. */
function badBranch(name: string): string | null {
  if (name.startsWith('-')) return 'must not start with "-"';
  if (name.includes('..') || name.includes('@{') || name.endsWith('.lock') || name.endsWith('/'))
    return 'is not a branch name git accepts';
  return null;
}

function resolveRepo(
  name: string,
  raw: RawConfig['workspaces']['repos'][string],
  baseDir: string,
  env: NodeJS.ProcessEnv,
  fail: Fail,
  secrets: boolean,
): RepoConfig {
  const at = `workspaces.repos.${name}`;
  const path = resolve(baseDir, raw.path);
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) throw fail(`${at}.path`, `${path} is not a directory`);
  if (!existsSync(join(path, '.git')))
    throw fail(`${at}.path`, `${path} is not a git repository's checkout (no .git in it)`);
  if (raw.base !== undefined) {
    const why = badBranch(raw.base);
    if (why) throw fail(`${at}.base`, why);
  }
  const copy = raw.copy ?? [];
  copy.forEach((rel, i) => {
    const clean = normalize(rel);
    if (isAbsolute(rel) || clean === '..' || clean.startsWith(`..${sep}`) || clean === '.')
      throw fail(`${at}.copy.${i}`, 'must be a path inside the repository, relative to its path');
  });
  const pr = raw.pr ? resolvePullRequests(raw.pr, path, `${at}.pr`, env, fail, secrets) : null;
  if (pr && raw.push === false)
    throw fail(`${at}.push`, 'a repository with "pr" pushes its tasks\' branches (leave it unset)');
  return {
    name,
    path,
    base: raw.base ?? null,
    setup: raw.setup ?? null,
    copy,
    // A pull request needs its branch on origin.
    push: raw.push ?? pr !== null,
    escapeCheck: raw.escapeCheck ?? true,
    pr,
  };
}

export function resolveWorkspaces(
  raw: RawConfig['workspaces'],
  baseDir: string,
  dataDir: string,
  env: NodeJS.ProcessEnv,
  fail: Fail,
  secrets = true,
): WorkspacesConfig {
  const repos: Record<string, RepoConfig> = {};
  for (const [name, repo] of Object.entries(raw.repos))
    repos[name] = resolveRepo(name, repo, baseDir, env, fail, secrets);
  const root = raw.root === null ? join(dataDir, 'workspaces') : resolve(baseDir, raw.root);
  for (const repo of Object.values(repos)) {
    const inside = (a: string, b: string) => a === b || a.startsWith(`${b}${sep}`);
    if (inside(root, repo.path) || inside(repo.path, root))
      throw fail(
        'workspaces.root',
        `${root} and repository ${repo.name} (${repo.path}) must not contain one another`,
      );
  }
  return { root, repos, keepDays: raw.keepDays, minFreeBytes: raw.minFreeBytes };
}

/** The profile's workspace kind and repository, checked against workspaces.repos. */
export function profileWorkspace(
  name: string,
  raw: RawConfig['workers']['profiles'][string],
  repos: Record<string, RepoConfig>,
  fail: Fail,
): Pick<Profile, 'workspace' | 'repo'> {
  const at = `workers.profiles.${name}`;
  const kind = raw.workspace ?? 'none';
  if (kind !== 'worktree') {
    if (raw.repo !== undefined)
      throw fail(`${at}.repo`, 'only a profile with workspace "worktree" names a repository');
    return { workspace: kind, repo: null };
  }
  if (raw.repo === undefined)
    throw fail(`${at}.repo`, 'required with workspace "worktree": a name in workspaces.repos');
  if (!(raw.repo in repos))
    throw fail(
      `${at}.repo`,
      `no repository "${raw.repo}" in workspaces.repos (${Object.keys(repos).join(', ') || 'none configured'})`,
    );
  return { workspace: 'worktree', repo: raw.repo };
}

/**
 * Why a task may not name `repo` (docs/workspaces.md): only a repository of workspaces.repos, for a profile
 * whose tasks get a worktree. A path is never taken.
 */
export function repoProblem(
  config: {
    workspaces: { repos: Record<string, RepoConfig> };
    workers: { defaultProfile: string; profiles: Record<string, Profile> };
  },
  repo: string,
  assignee: string | null,
): string | null {
  const names = Object.keys(config.workspaces.repos);
  if (!names.includes(repo))
    return `"${repo}" is not a repository in workspaces.repos (${names.join(', ') || 'none configured'})`;
  const name = assignee ?? config.workers.defaultProfile;
  const profile = config.workers.profiles[name];
  if (profile && profile.workspace !== 'worktree')
    return `profile "${name}" gives its tasks no worktree (its workspace is "${profile.workspace}")`;
  return null;
}
