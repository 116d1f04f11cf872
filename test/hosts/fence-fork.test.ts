// A host held up at the very fork of a worker, on a board shared with another host: the whole
// daemon stopped (strace makes the thread that spawns the worker's wrapper stop the process, as a
// SIGSTOP or a starved machine may at the worst moment) right before or right after that fork,
// until its lease has run out and the other host has taken the task over. The worker it forks
// late must not run beside the other host's.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api } from '../helpers/app.js';
import { startDaemon, tempDir, waitServing, writeConfig } from '../helpers/daemon.js';
import { testSchema } from '../helpers/postgres.js';
import { spawnTracked } from '../helpers/procs.js';
import { waitFor } from '../helpers/wait.js';

/** The shortest leases the config takes with these settings: a takeover about 7 s after a host stops. */
const CLUSTER = { leaseSeconds: 6, renewSeconds: 1, reclaimGraceSeconds: 1 };
/** How long the other host may take to run the task (after the lease and its grace). */
const TAKEOVER_S = 20;

/** The run ids of the task's workers alive now (the worker itself: its wrapper is not counted). */
function workersOf(taskId: string): string[] {
  const runs: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (!stat.includes('(sleep)') || stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z') continue;
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (!env.includes(`GATEHOUSE_TASK_ID=${taskId}`)) continue;
      const run = env.find((v) => v.startsWith('GATEHOUSE_RUN_ID='));
      if (run) runs.push(run.slice('GATEHOUSE_RUN_ID='.length));
    } catch {
      // gone meanwhile
    }
  }
  return runs;
}

function hostConfig(dataDir: string, name: string, store: object, started: string): string {
  return writeConfig(dataDir, {
    store,
    cluster: { ...CLUSTER, hostName: name },
    workers: {
      tickSeconds: 0.2,
      killGraceSeconds: 1,
      profiles: {
        // Says it started, then works until it is ended.
        mark: {
          command: ['/bin/sh', '-c', `echo "$GATEHOUSE_RUN_ID" >> ${started}; exec sleep 600`],
        },
      },
      defaultProfile: 'mark',
    },
  });
}

describe('a host held up at the fork of a worker, past its lease', () => {
  // The worker's wrapper is spawned by child_process on the event loop's thread: a pipe2 (for
  // exec's errors) right before the clone that forks it. A SIGSTOP injected as that thread
  // enters pipe2 stops the whole daemon before the fork. Just after it, the thread is held on
  // the clone's return (strace delays it): the child exists and goes on, the daemon does not.
  // (A signal injected at the clone would be taken before the fork, which the kernel restarts;
  // threads are made with clone3, which is not traced.)
  it.each([
    ['before the fork: the late wrapper starts no worker', 'pipe2'],
    [
      'just after the fork: its fence keeper ends the worker before the other host starts one',
      'clone:delay_exit=120s',
    ],
  ])(
    '%s',
    async (_, at) => {
      const when = at === 'pipe2' ? 'before' : 'after';
      const inject = when === 'before' ? `${at}:signal=SIGSTOP:when=1` : `${at}:when=1`;
      const { url, schema } = testSchema();
      const store = { kind: 'postgres', url, schema };
      const started = join(tempDir(), 'started');
      const dirA = tempDir();
      const a = startDaemon({ dataDir: dirA, config: hostConfig(dirA, 'alpha', store, started) });
      const baseA = await waitServing(dirA, a.pid, 30_000);
      await waitFor('alpha to join', async () => (await api(baseA, 'GET', '/hosts')).body.hosts[0]);

      // The daemon stopped by its event loop's thread as it spawns the worker's wrapper.
      const trace = join(tempDir(), 'strace');
      const strace = spawnTracked([
        'strace',
        '-p',
        String(a.pid),
        '-o',
        trace,
        '-e',
        'trace=pipe2,clone',
        '-e',
        `inject=${inject}`,
      ]);
      await waitFor('strace attached', () => strace.output().includes(`Process ${a.pid} attached`));
      const { id } = (await api(baseA, 'POST', '/tasks', { title: 'held', maxRetries: 3 })).body;
      // Stopped before the fork; held in the clone's return (a tracing stop) after it, while the
      // forked wrapper starts alpha's worker.
      const state = () => readFileSync(`/proc/${a.pid}/stat`, 'utf8').split(') ')[1]?.[0];
      await waitFor('the daemon held at the fork', () =>
        when === 'before'
          ? readFileSync(trace, 'utf8').includes('stopped by SIGSTOP')
          : existsSync(started) && readFileSync(started, 'utf8').trim() !== '' && state() === 't',
      );
      expect(/(^|\s)clone\(/m.test(readFileSync(trace, 'utf8'))).toBe(when === 'after');

      // Meanwhile beta joins, finds alpha's lease run out and runs the task itself.
      const overlaps: string[][] = [];
      const sampler = setInterval(() => {
        const now = workersOf(id);
        if (now.length > 1) overlaps.push(now);
      }, 20);
      try {
        const dirB = tempDir();
        const b = startDaemon({ dataDir: dirB, config: hostConfig(dirB, 'beta', store, started) });
        const baseB = await waitServing(dirB, b.pid, 30_000);
        const runs = await waitFor(
          'the task running on beta',
          async () => {
            const t = (await api(baseB, 'GET', `/tasks/${id}`)).body;
            return t.runs.length === 2 && t.runs[1].pid > 0 ? t.runs : null;
          },
          TAKEOVER_S * 1000,
        );
        const [alphaRun, betaRun] = runs;
        expect(alphaRun).toMatchObject({ host: 'alpha', outcome: 'lost' });
        expect(betaRun).toMatchObject({ host: 'beta', endedAt: null });
        // Alpha goes on, no longer traced (a thread that ends blocks its signals first, which
        // would stop it again): its wrapper is forked now (or ran), and it finds its lease lost.
        strace.child.kill('SIGTERM');
        await strace.exited;
        process.kill(a.pid, 'SIGCONT');
        const procJson = join(dirA, 'runs', alphaRun.id, 'proc.json');
        await waitFor(
          "alpha's late spawn recorded",
          () => existsSync(procJson) && readFileSync(procJson, 'utf8').trim() !== '',
        );
        await waitFor(
          'alpha back as a new host',
          async () =>
            (await api(baseA, 'GET', '/hosts').catch(() => null))?.body.hosts.filter(
              (h: { name: string; state: string }) => h.name === 'alpha' && h.state === 'active',
            ).length === 1,
          30_000,
        );
        expect(overlaps).toEqual([]);
        expect(workersOf(id)).toEqual([betaRun.id]);
        const lines = readFileSync(started, 'utf8').trim().split('\n');
        // Held before the fork, alpha's worker never started; held after it, it started and was
        // ended at the fence, before beta's.
        expect(lines).toEqual(when === 'before' ? [betaRun.id] : [alphaRun.id, betaRun.id]);
        if (when === 'before') {
          // Its wrapper refused to start it, or (the daemon guards the run at the fence as soon
          // as its fork returns, and the fence is past) the keeper ended the wrapper first.
          // The keeper may end it between the shell opening exit.json and its one write: an empty
          // file, which the daemon reads as no exit record.
          const exit = join(dirA, 'runs', alphaRun.id, 'exit.json');
          const text = existsSync(exit) ? readFileSync(exit, 'utf8') : '';
          if (text !== '') expect(JSON.parse(text)).toEqual({ status: 125, started: false });
        }
        await api(baseB, 'POST', `/tasks/${id}/archive`);
        await waitFor('the task archived', () => workersOf(id).length === 0);
        b.child.kill('SIGTERM');
        await b.exited;
      } finally {
        clearInterval(sampler);
        strace.child.kill('SIGTERM');
        process.kill(a.pid, 'SIGCONT');
        a.child.kill('SIGTERM');
        await a.exited;
      }
    },
    // More than its waits' own deadlines together (about 130 s): a phase that is slow fails with
    // its own message, not as the test's timeout (one CI run timed out at 90 s, saying nothing).
    150_000,
  );
});
