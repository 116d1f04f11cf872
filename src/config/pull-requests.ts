// A repository's `pr`, resolved: the forge's address, the project, the token read from the
// daemon's environment once, and the rules' defaults (docs/pull-requests.md).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Association, PullRequestConfig, RawConfig } from './schema.js';

type Fail = (key: string, message: string) => Error;
type RawPr = NonNullable<RawConfig['workspaces']['repos'][string]['pr']>;

const DEFAULT_API: Record<PullRequestConfig['provider'], string | null> = {
  github: 'https://api.github.com',
  gitlab: 'https://gitlab.com/api/v4',
  gitea: null,
};

export function resolvePullRequests(
  raw: RawPr,
  repoPath: string,
  at: string,
  env: NodeJS.ProcessEnv,
  fail: Fail,
  /** Read the token and the webhook's secret (the daemon), or leave them empty (the CLI). */
  secrets = true,
): PullRequestConfig {
  const api = raw.api ?? DEFAULT_API[raw.provider];
  if (api === null) throw fail(`${at}.api`, `required for ${raw.provider}: the API's base URL`);
  const project = raw.project ?? projectOf(originUrl(repoPath));
  if (project === null)
    throw fail(
      `${at}.project`,
      "required: origin's URL in the repository does not name a project (owner/name)",
    );
  const token = secrets ? env[raw.tokenEnv] : '';
  if (secrets && !token)
    throw fail(`${at}.tokenEnv`, `the variable ${raw.tokenEnv} is not set in the environment`);
  const secretEnv = raw.webhookSecretEnv ?? null;
  const secret = secretEnv === null || !secrets ? null : (env[secretEnv] ?? '');
  if (secrets && secretEnv !== null && !secret)
    throw fail(`${at}.webhookSecretEnv`, `the variable ${secretEnv} is not set in the environment`);
  const checks = raw.requiredChecks ?? 'protection';
  if (Array.isArray(checks) && new Set(checks).size !== checks.length)
    throw fail(`${at}.requiredChecks`, 'names a check twice');
  return {
    provider: raw.provider,
    api: api.replace(/\/+$/, ''),
    project,
    tokenEnv: raw.tokenEnv,
    token: token ?? '',
    draft: raw.draft ?? false,
    doneWhen: raw.doneWhen ?? 'merged',
    requiredChecks: checks,
    noChecksSeconds: raw.noChecksSeconds ?? 600,
    feedback: {
      checks: raw.feedback?.checks ?? true,
      reviews: raw.feedback?.reviews ?? true,
      maxRounds: raw.feedback?.maxRounds ?? 3,
      debounceSeconds: raw.feedback?.debounceSeconds ?? 60,
      from: [
        ...new Set(raw.feedback?.from ?? ['OWNER', 'MEMBER', 'COLLABORATOR']),
      ] as Association[],
    },
    webhookSecretEnv: secretEnv,
    webhookSecret: secret,
    pollSeconds: raw.pollSeconds ?? 60,
  };
}

/** origin's URL as the repository's own config file says it, or null. */
function originUrl(repoPath: string): string | null {
  let text: string;
  try {
    text = readFileSync(join(repoPath, '.git', 'config'), 'utf8');
  } catch {
    return null;
  }
  let inOrigin = false;
  for (const line of text.split('\n')) {
    const section = /^\s*\[(.+)\]\s*$/.exec(line);
    if (section) {
      inOrigin = /^remote\s+"origin"$/.test(section[1]!.trim());
      continue;
    }
    const url = inOrigin ? /^\s*url\s*=\s*(\S+)\s*$/.exec(line) : null;
    if (url) return url[1]!;
  }
  return null;
}

/**
 * The project a remote URL names: `owner/name` (GitLab: `group/sub/name`) from an https, ssh or
 * scp-like URL, without `.git`; null for anything else (a local path).
 */
export function projectOf(url: string | null): string | null {
  if (url === null) return null;
  const path =
    /^(?:https?|ssh|git):\/\/[^/]+\/(.+)$/.exec(url)?.[1] ??
    /^[^/:@]+@[^/:]+:(.+)$/.exec(url)?.[1] ??
    null;
  if (path === null) return null;
  const clean = path.replace(/\.git\/?$/, '').replace(/\/+$/, '');
  return /^[^\s/]+(\/[^\s/]+)+$/.test(clean) ? clean : null;
}
