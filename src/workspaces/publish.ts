// A task's branch made public: what the agent left committed, the branch pushed (never forced),
// and what someone else pushed taken in before the next run. The forge's credentials, when the
// remote is reached over HTTPS, go to that one git process in its environment, never to disk.
import { git, GitError } from './git.js';

/** An Authorization header for the remote's host, or null (SSH, a local path). */
export type RemoteAuth = { header: string } | null;

/** The name and address commits are made with: the repository's own, else gatehouse's. */
async function identityEnv(path: string): Promise<Record<string, string>> {
  const read = async (key: string) =>
    (await git(path, ['config', '--get', key], { okCodes: [1] })).stdout.trim();
  const [name, email] = await Promise.all([read('user.name'), read('user.email')]);
  if (!name || !email) return {};
  return {
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email,
  };
}

/**
 * Commits everything the worktree holds that is not committed (tracked and untracked, not
 * ignored) as one commit: `message`, then the trailers. Whether there was anything.
 */
export async function commitLeftovers(
  path: string,
  title: string,
  trailers: Record<string, string>,
): Promise<boolean> {
  await git(path, ['add', '--all', '--', '.']);
  const { code } = await git(path, ['diff', '--no-ext-diff', '--cached', '--quiet', 'HEAD'], {
    okCodes: [1],
  });
  if (code === 0) return false;
  const trailer = Object.entries(trailers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n');
  const subject = title.replace(/\s+/g, ' ').trim() || 'gatehouse task';
  await git(
    path,
    ['commit', '--quiet', '--no-verify', '--no-gpg-sign', '-m', subject, '-m', trailer],
    { env: await identityEnv(path) },
  );
  return true;
}

/** How many commits the worktree's HEAD has that `base` lacks. */
export async function commitsAhead(path: string, base: string): Promise<number> {
  const { stdout } = await git(path, ['rev-list', '--count', `${base}..HEAD`]);
  return Number(stdout.trim());
}

/** git's environment carrying the header for origin's host, when origin is reached over HTTPS. */
async function authEnv(repoPath: string, auth: RemoteAuth): Promise<Record<string, string>> {
  if (auth === null) return {};
  const url = (
    await git(repoPath, ['config', '--get', 'remote.origin.url'], { okCodes: [1] })
  ).stdout.trim();
  const origin = /^(https?:\/\/[^/]+\/)/.exec(url)?.[1];
  if (!origin) return {};
  return {
    GIT_CONFIG_COUNT: '2',
    GIT_CONFIG_KEY_0: `http.${origin}.extraHeader`,
    GIT_CONFIG_VALUE_0: auth.header,
    // No credential helper keeps what it is given.
    GIT_CONFIG_KEY_1: 'credential.helper',
    GIT_CONFIG_VALUE_1: '',
  };
}

/**
 * Pushes the branch to origin, never forced. 'rejected' when origin has commits the branch lacks
 * (someone else pushed, or the agent rewrote history): nothing on origin is overwritten.
 */
export async function pushTask(
  repoPath: string,
  branch: string,
  auth: RemoteAuth,
): Promise<'pushed' | 'rejected'> {
  const ref = `refs/heads/${branch}`;
  try {
    await git(repoPath, ['push', '--quiet', 'origin', `${ref}:${ref}`], {
      timeoutMs: 300_000,
      env: await authEnv(repoPath, auth),
    });
    return 'pushed';
  } catch (err) {
    if (
      err instanceof GitError &&
      /\[rejected\]|non-fast-forward|fetch first|\(stale info\)/i.test(err.stderr + err.message)
    )
      return 'rejected';
    throw err;
  }
}

/** What origin's copy of the branch is to the worktree's. */
export type RemoteState =
  | { state: 'same' | 'absent' }
  | { state: 'fast_forwarded'; commits: string[] }
  | { state: 'diverged'; commits: string[] };

/**
 * Takes in what someone else pushed to the task's branch: fast-forwarded when the worktree's
 * commits are all on origin's, else the remote commits are named (the agent integrates them).
 * Run with the worktree clean (its run's leftovers committed).
 */
export async function takeRemote(
  worktree: string,
  repoPath: string,
  branch: string,
  auth: RemoteAuth,
): Promise<RemoteState> {
  const env = await authEnv(repoPath, auth);
  const { code } = await git(
    worktree,
    ['fetch', '--quiet', '--no-tags', 'origin', `refs/heads/${branch}`],
    {
      timeoutMs: 300_000,
      env,
      okCodes: [128],
    },
  );
  // FETCH_HEAD is the worktree's own: other tasks' fetches do not move it.
  if (code !== 0) return { state: 'absent' };
  const ancestor = async (a: string, b: string) =>
    (await git(worktree, ['merge-base', '--is-ancestor', a, b], { okCodes: [1] })).code === 0;
  if (await ancestor('FETCH_HEAD', 'HEAD')) return { state: 'same' };
  const { stdout } = await git(worktree, [
    'log',
    '--format=%h %s',
    '--max-count=50',
    'HEAD..FETCH_HEAD',
  ]);
  const commits = stdout.split('\n').filter(Boolean);
  if (await ancestor('HEAD', 'FETCH_HEAD')) {
    await git(worktree, ['merge', '--quiet', '--ff-only', 'FETCH_HEAD']);
    return { state: 'fast_forwarded', commits };
  }
  return { state: 'diverged', commits };
}
