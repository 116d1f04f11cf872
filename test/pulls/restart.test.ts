// A daemon killed between the forge's creating a pull request and its record of it: the next
// instance finds the PR of the task's branch and adopts it, never opening a second. A real
// daemon, SIGKILL, both engines.
import { afterEach, describe, expect, it } from 'vitest';
import { api } from '../helpers/app.js';
import { runCli, startDaemon, tempDir, waitServing, writeConfig } from '../helpers/daemon.js';
import { githubDouble, type GithubDouble } from '../helpers/forges/github.js';
import { ForgeModel } from '../helpers/forges/model.js';
import { ENGINE, storeConfig } from '../helpers/store.js';
import { waitFor } from '../helpers/wait.js';
import { TOKEN_ENV, WORKER } from './setup.js';

const doubles: GithubDouble[] = [];
afterEach(async () => {
  for (const d of doubles.splice(0)) await d.close();
});

describe('a daemon killed while it opened a pull request', () => {
  it('adopts the PR it created before it died, and opens no second one', async () => {
    const { model, checkout } = ForgeModel.withRepository();
    const double = await githubDouble(model);
    doubles.push(double);
    const dataDir = tempDir();
    const config = writeConfig(tempDir(), {
      store: storeConfig(ENGINE, dataDir),
      workers: {
        tickSeconds: 0.1,
        killGraceSeconds: 0.3,
        defaultProfile: 'dev',
        profiles: { dev: WORKER },
      },
      workspaces: {
        minFreeBytes: 0,
        repos: {
          app: {
            path: checkout,
            base: 'main',
            pr: {
              provider: 'github',
              api: double.url,
              project: model.project,
              tokenEnv: TOKEN_ENV,
              pollSeconds: 1,
              requiredChecks: [],
            },
          },
        },
      },
    });
    const env = { [TOKEN_ENV]: double.token };
    const created = double.server.holdAnswer('POST', /\/pulls$/);
    const daemon = startDaemon({ dataDir, config, env });
    const url = await waitServing(dataDir, daemon.pid);
    const { id } = (await api(url, 'POST', '/tasks', { title: 'survives a kill' })).body;
    await created;
    expect(model.prs).toHaveLength(1);
    daemon.child.kill('SIGKILL');
    await daemon.exited;

    const again = startDaemon({ dataDir, config, env });
    const url2 = await waitServing(dataDir, again.pid);
    const task = await waitFor('the PR adopted', async () => {
      const t = (await api(url2, 'GET', `/tasks/${id}`)).body;
      return t.pr ? t : null;
    });
    expect(task).toMatchObject({ status: 'review', pr: { number: 1, state: 'open' } });
    expect(model.prs).toHaveLength(1);
    const kinds = (await api(url2, 'GET', `/tasks/${id}/events`)).body.events.map(
      (e: any) => e.kind,
    );
    expect(kinds).toContain('pr_adopted');
    expect(double.server.seen(/\/pulls$/, 'POST')).toHaveLength(1);
    // The CLI says it, as a person at the terminal reads it.
    const shown = await runCli(['task', 'pr', id, '--data-dir', dataDir, '--config', config]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('#1 open  https://github.com/acme/app/pull/1');
    expect(shown.stdout).toMatch(
      /checks (pending|passing|none), review none, 0 rounds of feedback; task review/,
    );
    again.child.kill('SIGTERM');
    await again.exited;
  });
});
