// Setting the sandbox up (docs/sandbox.md): a host without bubblewrap refuses to start naming the
// package and the key; network "none" has only its own loopback; limits the host cannot enforce
// are said in /ready; with a sandboxed profile and no api.token, the API takes only the token the
// daemon made (0600 in its data dir), which the CLI finds and the start's login link gives once.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, startGateway } from '../helpers/app.js';
import {
  daemonAuth,
  runCli,
  startDaemon,
  tempDir,
  waitServing,
  writeConfig,
} from '../helpers/daemon.js';
import { waitFor } from '../helpers/wait.js';
import { createTask, settledIn } from '../helpers/workers.js';

const boxed = (command: string, sandbox: object = {}) => ({
  command: ['/bin/sh', '-c', command],
  sandbox: { kind: 'bwrap', ...sandbox },
});

describe('setting the sandbox up', () => {
  it('refuses to start without bubblewrap, naming the package and the key that turns it off', async () => {
    const dataDir = tempDir();
    const config = writeConfig(tempDir(), {
      workers: { defaultProfile: 'boxed', profiles: { boxed: boxed('true') } },
    });
    const daemon = startDaemon({ dataDir, config, env: { PATH: tempDir() } });
    expect((await daemon.exited).code).toBe(78);
    expect(daemon.stderr()).toContain('workers.profiles.boxed.sandbox.kind');
    expect(daemon.stderr()).toContain('"bubblewrap"');
  });

  it('gives network "none" only a loopback of its own', async () => {
    const gw = await startGateway(
      {
        workers: {
          tickSeconds: 0.1,
          defaultProfile: 'offline',
          profiles: {
            offline: boxed(
              `port=\${GATEHOUSE_URL##*:}; node -e "require('net').connect(Number(process.argv[1]), '127.0.0.1').on('connect', () => process.exit(0)).on('error', () => process.exit(3))" "$port"; printf '{"status":"done","summary":"reached the daemon: %s"}' "$?" > "$GATEHOUSE_RUN_DIR/result.json"`,
              { network: 'none' },
            ),
          },
        },
      },
      { dispatch: true },
    );
    const { id } = await createTask(gw, { title: 'offline' });
    const done = await settledIn(gw, id, 'done', 30_000);
    expect(done.summary).toBe('reached the daemon: 3');
  });

  it('says in /ready that limits are not enforced where the host has no cgroup v2 for them', async () => {
    const gw = await startGateway({
      workers: {
        defaultProfile: 'limited',
        profiles: { limited: boxed('true', { limits: { pidsMax: 64 } }) },
      },
    });
    const ready = (await api(gw.url, 'GET', '/ready')).body;
    // This machine's cgroup v2 (if any) gives its children no pids controller.
    const pids = (() => {
      try {
        return readFileSync('/sys/fs/cgroup/cgroup.subtree_control', 'utf8').includes('pids');
      } catch {
        return false;
      }
    })();
    if (pids) return;
    expect(ready.subsystems.limits).toEqual({
      status: 'degraded',
      detail: expect.stringContaining('sandbox.limits of limited are not enforced'),
    });
  });

  it('needs a token on loopback too: its own, 0600 in the data dir, found by the CLI, given once by the login link', async () => {
    const dataDir = tempDir();
    const config = writeConfig(tempDir(), {
      workers: { defaultProfile: 'boxed', profiles: { boxed: boxed('true') } },
    });
    const daemon = startDaemon({ dataDir, config });
    const url = await waitServing(dataDir, daemon.pid);
    expect(statSync(join(dataDir, 'api-token')).mode & 0o777).toBe(0o600);
    expect((await api(url, 'POST', '/admin/stop')).status).toBe(401);
    expect((await api(url, 'GET', '/tasks')).status).toBe(401);
    const auth = daemonAuth(dataDir);
    expect((await api(url, 'GET', '/tasks', undefined, auth)).status).toBe(200);
    const cli = await runCli(['task', 'ls', '--data-dir', dataDir, '--config', config]);
    expect(cli.code).toBe(0);
    const link = await waitFor(
      'the login link in the log',
      async () => /#login=([A-Za-z0-9_-]+)/.exec(daemon.output())?.[1],
    );
    const first = await api(url, 'POST', '/auth/login', { code: link });
    expect(first).toMatchObject({ status: 200, body: { token: auth.authorization!.slice(7) } });
    expect((await api(url, 'POST', '/auth/login', { code: link })).status).toBe(401);
    // Kept across a restart: the same token.
    daemon.child.kill('SIGTERM');
    await daemon.exited;
    const again = startDaemon({ dataDir, config });
    await waitServing(dataDir, again.pid);
    expect(daemonAuth(dataDir)).toEqual(auth);
    again.child.kill('SIGTERM');
    await again.exited;
  });
});
