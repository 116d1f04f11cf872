// A daemon killed while it made a task's worktree (its setup running): the next instance never
// hands the half-made worktree to a worker, ends the setup that was left running, and makes
// the worktree again. Both engines, a real daemon, SIGKILL.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api } from '../helpers/app.js';
import { startDaemon, tempDir, waitServing, writeConfig } from '../helpers/daemon.js';
import { gitOut, makeRepo } from '../helpers/git.js';
import { ENGINE, storeConfig } from '../helpers/store.js';
import { waitFor } from '../helpers/wait.js';
import { pidExists } from '../../src/proc/index.js';

describe('a daemon killed while it made a worktree', () => {
  it('makes the worktree again on restart, ending the setup the dead daemon left running', async () => {
    const repo = makeRepo();
    const dataDir = tempDir();
    const marks = tempDir();
    const first = join(marks, 'first-setup.pid');
    // The first setup writes its pid and hangs; the second finishes.
    const setup = `if [ -f ${first} ]; then echo second > .setup-ran; exit 0; fi; echo $$ > ${first}; exec sleep 300`;
    const config = writeConfig(tempDir(), {
      store: storeConfig(ENGINE, dataDir),
      workers: {
        tickSeconds: 0.1,
        killGraceSeconds: 0.3,
        failureLimit: 3,
        defaultProfile: 'agent',
        profiles: {
          agent: {
            command: [
              '/bin/sh',
              '-c',
              'printf \'{"status":"done","summary":"%s"}\' "$(cat .setup-ran)" > "$GATEHOUSE_RUN_DIR/result.json"',
            ],
            workspace: 'worktree',
            repo: 'app',
          },
        },
      },
      workspaces: {
        repos: { app: { path: repo, setup: ['/bin/sh', '-c', setup] } },
        minFreeBytes: 0,
      },
    });
    const daemon = startDaemon({ dataDir, config });
    const url = await waitServing(dataDir, daemon.pid);
    const { id } = (await api(url, 'POST', '/tasks', { title: 'made twice' })).body;
    // Its pid written whole (the shell makes the file before it writes to it).
    const setupPid = await waitFor('the first setup to run', () =>
      existsSync(first) ? Number(readFileSync(first, 'utf8').trim()) || null : null,
    );
    daemon.child.kill('SIGKILL');
    await daemon.exited;
    // Left behind: the half-made worktree and its setup, still running.
    expect(pidExists(setupPid)).toBe(true);
    expect(existsSync(join(dataDir, 'workspaces', '.making', id))).toBe(true);

    const again = startDaemon({ dataDir, config });
    const url2 = await waitServing(dataDir, again.pid);
    const task = await waitFor(
      'the task done',
      async () => {
        const t = (await api(url2, 'GET', `/tasks/${id}`)).body;
        return t.status === 'done' ? t : null;
      },
      30_000,
    );
    expect(task.summary).toBe('second');
    expect(task.workspace).toMatchObject({ state: 'active', branch: `gatehouse/${id}` });
    // The dead daemon's setup was ended with its run; nothing half made is left.
    await waitFor('the first setup gone', () => !pidExists(setupPid));
    expect(readdirSync(join(dataDir, 'workspaces', '.making'))).toEqual([]);
    const worktrees = gitOut(repo, 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((l) => l.startsWith('worktree '));
    expect(worktrees).toEqual([`worktree ${repo}`, `worktree ${join(dataDir, 'workspaces', id)}`]);
    again.child.kill('SIGTERM');
    await again.exited;
  });
});
