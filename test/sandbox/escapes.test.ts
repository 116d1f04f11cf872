// A sandboxed run reaches its task and nothing else (docs/sandbox.md), tried as an attacker
// would from inside a real bubblewrap: every escape fails, while its own work (a commit, a file
// in its worktree) lands; the repository, checked from outside afterwards, is whole. Both engines.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startGateway } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';
import { gitCode, gitOut, makeRepo } from '../helpers/git.js';
import { waitFor } from '../helpers/wait.js';
import { ATTACK, processesMatching } from './attack.js';
import { createTask, getTask, settledIn } from '../helpers/workers.js';

describe('a sandboxed run', () => {
  it('cannot reach the board, the config, other tasks, the daemon or the repository, and its own work lands', async () => {
    const repo = makeRepo();
    const base = gitOut(repo, 'rev-parse', 'HEAD');
    const plan = join(tempDir(), 'plan');
    mkdirSync(plan);
    writeFileSync(join(plan, 'attack.sh'), ATTACK);
    const dataDir = tempDir();
    const gw = await startGateway(
      {
        workers: {
          tickSeconds: 0.1,
          killGraceSeconds: 0.5,
          defaultProfile: 'attacker',
          profiles: {
            attacker: {
              command: ['/bin/sh', join(plan, 'attack.sh')],
              env: { PLAN: plan },
              workspace: 'worktree',
              repo: 'app',
              sandbox: { kind: 'bwrap', readOnly: [plan] },
            },
            victim: {
              command: ['/bin/sh', '-c', 'echo mine > mine.txt; exec sleep 300'],
              workspace: 'worktree',
              repo: 'app',
            },
          },
        },
        workspaces: { repos: { app: { path: repo, base: 'main' } }, minFreeBytes: 0 },
      },
      { dispatch: true, dataDir },
    );
    const victim = await createTask(gw, { title: 'victim', assignee: 'victim' });
    const running = await waitFor('the victim running', async () => {
      const t = await getTask(gw, victim.id);
      return t.status === 'running' && t.worker ? t : null;
    });
    // What the daemon user's home holds (hidden inside, whatever it is).
    const homeFiles = ['.ssh', '.bashrc', '.profile', '.gitconfig', '.npmrc', '.cache'].filter(
      (f) => existsSync(join(homedir(), f)),
    );
    expect(homeFiles.length).toBeGreaterThan(0);
    writeFileSync(
      join(plan, 'plan.env'),
      [
        `DATA='${dataDir}'`,
        `CONFIG='${gw.config.source}'`,
        `VICTIM_RUN='${running.currentRunId}'`,
        `VICTIM_WS='${running.workspace.path}'`,
        `VICTIM_ID='${victim.id}'`,
        `VICTIM_PID='${running.worker.pid}'`,
        `DAEMON_PID='${process.pid}'`,
        `DAEMON_HOME='${homedir()}'`,
        `HOME_FILES='${homeFiles.join(' ')}'`,
        `REPO='${repo}'`,
        `BASE='${base}'`,
        `TASK='t'`,
      ].join('\n'),
    );
    const attacker = await createTask(gw, { title: 'attacker' });
    const done = await settledIn(gw, attacker.id, 'done', 30_000);
    const branch = `gatehouse/${attacker.id}`;
    // Its own commit is on its branch in the repository.
    const report = gitOut(repo, 'show', `${branch}:escapes.txt`);
    expect(gitOut(repo, 'show', `${branch}:work.txt`)).toBe("the run's own work");
    expect(gitOut(repo, 'log', '-1', '--format=%s', branch)).toBe('work from inside the sandbox');
    expect(done.runs[0].workspace.headAfter).toBe(gitOut(repo, 'rev-parse', branch));
    const escaped = report.split('\n').filter((l) => !l.endsWith(' blocked'));
    expect(escaped).toEqual([]);
    expect(report.split('\n')).toHaveLength(16);
    // Seen from outside: the repository is whole and nothing planted runs.
    expect(gitOut(repo, 'rev-parse', 'main')).toBe(base);
    expect(gitCode(repo, 'rev-parse', '--verify', `refs/heads/gatehouse/${victim.id}`)).toBe(0);
    execFileSync('git', ['-C', repo, 'fsck', '--no-progress'], { stdio: 'ignore' });
    expect(existsSync(join(repo, '.git/hooks/post-commit'))).toBe(false);
    expect(readFileSync(join(repo, '.git/config'), 'utf8')).not.toContain('fsmonitor');
    expect(existsSync(join(running.workspace.path, 'pwned.txt'))).toBe(false);
    expect(existsSync('/tmp/escaped-t')).toBe(false);
    expect(existsSync(join(plan, 'hook-ran')) || existsSync(join(plan, 'fsmonitor-ran'))).toBe(
      false,
    );
    expect(readFileSync(join(repo, 'README.md'), 'utf8')).toBe('# app\n');
    expect((await getTask(gw, victim.id)).status).toBe('running');
    // The setsid child it started without any of our variables went with its sandbox.
    await waitFor(
      'nothing of the run left',
      async () => processesMatching('sleep\u00004242').length === 0,
    );
  });
});
