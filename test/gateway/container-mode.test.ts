// The Docker image's runtime, without Docker: the files its Dockerfile copies (node_modules
// pruned of dev dependencies), its environment, an unprivileged user. In container mode a stop
// ends the workers itself: their runs are `interrupted` and the task is re-run, not failed.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pidExists } from '../../src/proc/index.js';
import { api } from '../helpers/app.js';
import { ROOT, freePort, tempDir, waitServing } from '../helpers/daemon.js';
import { spawnTracked } from '../helpers/procs.js';
import { waitFor } from '../helpers/wait.js';
import { reportsWhenToldProfile } from '../helpers/workers.js';

const NOBODY = 65534;

/** Lays out what the Dockerfile's runtime stage copies; returns its root and its ENV. */
function imageRuntime(): { root: string; env: Record<string, string> } {
  const root = tempDir('gatehouse-image-');
  chmodSync(root, 0o755);
  const lines = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
    .replace(/\\\n\s*/g, ' ')
    .split('\n');
  const runtime = lines.slice(lines.findLastIndex((l) => l.startsWith('FROM ')));
  const env: Record<string, string> = {};
  for (const line of runtime) {
    const copy = /^COPY (?:--from=build )?(\S+) (\S+)$/.exec(line);
    if (copy) {
      const [, from, to] = copy as unknown as [string, string, string];
      const source = join(ROOT, from.replace(/^\/app\//, ''));
      const dest = to.startsWith('/') ? join(root, to) : join(root, 'app', to);
      const target = to.endsWith('/') ? join(dest, basename(from)) : dest;
      mkdirSync(dirname(target), { recursive: true });
      cpSync(source, target, { recursive: true });
    }
    const vars = /^ENV (.*)$/.exec(line)?.[1];
    for (const [, k, v] of vars?.matchAll(/(\w+)=(\S+)/g) ?? []) env[k!] = v!;
  }
  // The build stage's `npm prune --omit=dev`.
  cpSync(join(ROOT, 'package-lock.json'), join(root, 'app', 'package-lock.json'));
  execFileSync(
    'npm',
    ['prune', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--offline'],
    {
      cwd: join(root, 'app'),
      stdio: 'ignore',
    },
  );
  return { root, env };
}

describe('container mode', () => {
  it(
    're-runs a task whose worker a docker stop ended, instead of counting a crash',
    { timeout: 120_000 },
    async () => {
      const { root, env } = imageRuntime();
      const app = join(root, 'app');
      const dataDir = join(root, 'data');
      mkdirSync(dataDir);
      const asRoot = process.getuid?.() === 0;
      if (asRoot) chownSync(dataDir, NOBODY, NOBODY);
      // The image's config plus a worker that waits for a go file, then reports.
      const configPath = env.GATEHOUSE_CONFIG!.replace(/^\//, `${root}/`);
      const image = JSON.parse(readFileSync(configPath, 'utf8'));
      expect(image.shutdown.workers).toBe('terminate');
      writeFileSync(
        configPath,
        JSON.stringify({
          ...image,
          workers: {
            tickSeconds: 0.1,
            defaultProfile: 'waits',
            profiles: {
              waits: reportsWhenToldProfile('after the restart', [], join(app, 'bin/gatehouse.js')),
            },
          },
        }),
      );
      const port = await freePort();
      const token = 'a-container-api-token';
      const runEnv = {
        ...env,
        GATEHOUSE_DATA_DIR: dataDir,
        GATEHOUSE_CONFIG: configPath,
        GATEHOUSE_PORT: String(port),
        GATEHOUSE_TOKEN: token,
        PATH: process.env.PATH ?? '/usr/bin:/bin',
      };
      const start = () =>
        spawnTracked(
          [
            ...(asRoot
              ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups']
              : []),
            process.execPath,
            'bin/gatehouse.js',
            'run',
          ],
          { cwd: app, env: runEnv },
        );
      const auth = { authorization: `Bearer ${token}` };
      let daemon = start();
      const url = await waitServing(dataDir, daemon.pid, 30_000);
      const id = (await api(url, 'POST', '/tasks', { title: 'survives docker stop' }, auth)).body
        .id;
      const first = await waitFor('a running worker', async () => {
        const task = (await api(url, 'GET', `/tasks/${id}`, undefined, auth)).body;
        return task.runs[0]?.pid ? task.runs[0] : null;
      });

      daemon.child.kill('SIGTERM');
      expect((await daemon.closed).code).toBe(0);
      await waitFor('the worker ended by the stop', () => !pidExists(first.pid));

      daemon = start();
      await waitServing(dataDir, daemon.pid, 30_000);
      const interrupted = (await api(url, 'GET', `/tasks/${id}`, undefined, auth)).body;
      expect(interrupted.runs[0]).toMatchObject({ outcome: 'interrupted' });
      expect(interrupted.consecutiveFailures).toBe(0);
      const second = await waitFor('the task re-run', async () => {
        const task = (await api(url, 'GET', `/tasks/${id}`, undefined, auth)).body;
        return task.runs[1]?.pid ? task.runs[1] : null;
      });
      writeFileSync(join(dataDir, 'runs', second.id, 'go'), '');
      const done = await waitFor('done', async () => {
        const task = (await api(url, 'GET', `/tasks/${id}`, undefined, auth)).body;
        return task.status === 'done' ? task : null;
      });
      expect(done.runs.map((r: { outcome: string }) => r.outcome)).toEqual([
        'interrupted',
        'completed',
      ]);
      const health = spawnTracked([process.execPath, 'libexec/healthcheck.mjs'], {
        cwd: app,
        env: runEnv,
      });
      expect((await health.closed).code).toBe(0);
      daemon.child.kill('SIGTERM');
      expect((await daemon.closed).code).toBe(0);
    },
  );
});
