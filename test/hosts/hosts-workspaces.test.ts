// Workspaces on a board shared by hosts (docs/workspaces.md): a task's later runs stay on the host that has
// its worktree; when that host is declared dead another host makes the worktree again from the
// branch origin has; the dead host, back, preserves what its old worktree held.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api } from '../helpers/app.js';
import { startDaemon, tempDir, waitServing } from '../helpers/daemon.js';
import { gitOut, makeRepo } from '../helpers/git.js';
import { startHosts, stopHosts } from '../helpers/hosts.js';
import { waitFor } from '../helpers/wait.js';

const IDENTITY = {
  GIT_AUTHOR_NAME: 'agent',
  GIT_AUTHOR_EMAIL: 'agent@localhost',
  GIT_COMMITTER_NAME: 'agent',
  GIT_COMMITTER_EMAIL: 'agent@localhost',
};

/** A bare origin, and a clone of it per host. */
function clones(n: number): { origin: string; repos: string[] } {
  const seed = makeRepo();
  const origin = join(tempDir('gatehouse-origin-'), 'origin.git');
  execFileSync('git', ['clone', '--quiet', '--bare', seed, origin]);
  const repos = Array.from({ length: n }, () => {
    const path = join(tempDir('gatehouse-clone-'), 'app');
    execFileSync('git', ['clone', '--quiet', origin, path]);
    return path;
  });
  return { origin, repos };
}

/** First run: commits `attempt`, then exits `firstExit`; a later run reports what it found. */
const worker = (firstExit: number) => ({
  command: [
    '/bin/sh',
    '-c',
    `if [ ! -f attempt ]; then echo one > attempt; git add attempt; git commit -qm one; exit ${firstExit}; fi
printf '{"status":"done","summary":"saw %s"}' "$(cat attempt)" > "$GATEHOUSE_RUN_DIR/result.json"`,
  ],
  env: IDENTITY,
  workspace: 'worktree',
  repo: 'app',
});

async function task(base: string, id: string) {
  return (await api(base, 'GET', `/tasks/${id}`)).body;
}

describe('workspaces on a shared board', () => {
  it('keeps a task’s later runs on the host that has its worktree', async () => {
    const { repos } = clones(2);
    const hosts = await startHosts(['alpha', 'beta'], (_name, i) => ({
      workers: {
        tickSeconds: 0.1,
        failureLimit: 3,
        defaultProfile: 'agent',
        profiles: { agent: worker(1) },
      },
      workspaces: { repos: { app: { path: repos[i], push: true } }, minFreeBytes: 0 },
    }));
    try {
      const base = hosts[0]!.base;
      const ids = await Promise.all(
        Array.from(
          { length: 6 },
          async (_, i) => (await api(base, 'POST', '/tasks', { title: `t${i}` })).body.id,
        ),
      );
      for (const id of ids) {
        const done = await waitFor(`${id} done`, async () => {
          const t = await task(base, id);
          return t.status === 'done' ? t : null;
        });
        const [first, second] = done.runs;
        expect(first.outcome).toBe('crashed');
        // Both hosts dispatch every 100 ms: without the rule, about half the retries would go
        // to the other host, and find no commit there.
        expect(second.host).toBe(first.host);
        expect(done.workspace.host).toBe(first.host);
        expect(done.summary).toBe('saw one');
      }
    } finally {
      await stopHosts(hosts);
    }
  }, 90_000);

  it('makes the worktree again on another host from origin once its host is dead, and the dead host preserves its old one when it is back', async () => {
    const { origin, repos } = clones(2);
    const config = (i: number) => ({
      workers: {
        tickSeconds: 0.1,
        rateLimitCooldownSeconds: 3,
        defaultProfile: 'agent',
        // The first run asks to wait (exit 75): the task waits 3 s, long enough to lose alpha.
        profiles: { agent: worker(75) },
        maxConcurrent: i === 0 ? 8 : 0,
      },
      workspaces: { repos: { app: { path: repos[i], push: true } }, minFreeBytes: 0 },
    });
    // beta dispatches nothing until alpha is gone (maxConcurrent 0): the first run is alpha's.
    const hosts = await startHosts(['alpha', 'beta'], (_name, i) => config(i));
    const [alpha, beta] = hosts as [(typeof hosts)[0], (typeof hosts)[0]];
    try {
      const { id } = (await api(alpha.base, 'POST', '/tasks', { title: 'moves' })).body;
      const waited = await waitFor('the first run, on alpha', async () => {
        const t = await task(alpha.base, id);
        return t.runs[0]?.outcome === 'rate_limited' ? t : null;
      });
      expect(waited.runs[0].host).toBe('alpha');
      const alphaPath = waited.workspace.path;
      // Its commit reaches origin after the end of its run (pushed in the background).
      await waitFor('the branch on origin', () => {
        try {
          return gitOut(origin, 'show', `gatehouse/${id}:attempt`) === 'one';
        } catch {
          return false;
        }
      });
      alpha.daemon.child.kill('SIGKILL');
      await alpha.daemon.exited;
      // beta may dispatch now; it takes the task once alpha is declared dead.
      beta.daemon.child.kill('SIGTERM');
      await beta.daemon.exited;
      const betaAgain = startDaemon({
        dataDir: beta.dataDir,
        config: writeBetaConfig(beta.config),
      });
      const betaBase = await waitServing(beta.dataDir, betaAgain.pid, 30_000);
      const done = await waitFor(
        'the task done on beta',
        async () => {
          const t = await task(betaBase, id);
          return t.status === 'done' ? t : null;
        },
        60_000,
      );
      expect(done.runs.at(-1).host).toBe('beta');
      expect(done.workspace).toMatchObject({ host: 'beta', state: 'active' });
      expect(done.summary).toBe('saw one');
      const events = (await api(betaBase, 'GET', `/tasks/${id}/events`)).body.events;
      expect(
        events.find((e: { kind: string }) => e.kind === 'workspace_recreated')?.payload,
      ).toEqual({ fromHost: 'alpha', branch: `gatehouse/${id}`, from: 'origin' });

      // alpha back: its old worktree is not its task's any more. Kept, then removed.
      expect(existsSync(alphaPath)).toBe(true);
      const alphaAgain = startDaemon({ dataDir: alpha.dataDir, config: alpha.config });
      await waitServing(alpha.dataDir, alphaAgain.pid, 30_000);
      await waitFor('alpha’s old worktree retired', () => !existsSync(alphaPath), 30_000);
      expect(gitOut(repos[0]!, 'rev-parse', '--verify', `refs/gatehouse/preserved/${id}`)).toMatch(
        /^[0-9a-f]{40}$/,
      );
      alphaAgain.child.kill('SIGTERM');
      betaAgain.child.kill('SIGTERM');
      await Promise.all([alphaAgain.exited, betaAgain.exited]);
    } finally {
      await stopHosts(hosts);
    }
  }, 120_000);
});

/** beta's config file with dispatch on. */
function writeBetaConfig(path: string): string {
  const config = JSON.parse(readFileSync(path, 'utf8'));
  config.workers.maxConcurrent = 8;
  writeFileSync(path, JSON.stringify(config));
  return path;
}
