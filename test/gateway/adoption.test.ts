import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pidExists } from '../../src/proc/index.js';
import { api } from '../helpers/app.js';
import { existsSync } from 'node:fs';
import { readCmdline, readEnviron } from '../../src/proc/index.js';
import {
  ROOT,
  freePort,
  startDaemon,
  tempDir,
  waitServing,
  writeConfig,
} from '../helpers/daemon.js';
import { waitFor } from '../helpers/wait.js';
import { profile, reportsWhenToldProfile } from '../helpers/workers.js';

async function setup(behaviour: string, arg: string) {
  return setupWith(profile(behaviour, {}, arg));
}

async function setupWith(worker: object) {
  const dataDir = tempDir();
  const port = await freePort();
  const config = writeConfig(tempDir(), {
    workers: { tickSeconds: 0.1, failureLimit: 1, profiles: { w: worker } },
  });
  return { dataDir, port, config };
}

const helperWorker = (...flags: string[]) =>
  reportsWhenToldProfile('finished while gatehouse was away', flags);

/** Starts a daemon, waits for a running worker, and stops the daemon (exit 0) under it. */
async function stoppedUnderAWorker(worker: object) {
  const { dataDir, port, config } = await setupWith(worker);
  const first = startDaemon({ dataDir, port, config });
  const url = await waitServing(dataDir, first.pid);
  const { id, run } = await runningTask(url);
  first.child.kill('SIGTERM');
  expect((await first.exited).code).toBe(0);
  return { dataDir, port, config, url, id, run };
}

/** Live `gatehouse worker complete` helpers of a run. */
function helpersOf(runId: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter(
      (pid) =>
        readCmdline(pid)?.includes('complete') === true &&
        readEnviron(pid)?.includes(`GATEHOUSE_RUN_ID=${runId}`) === true,
    );
}

async function doneWithOneCompletedRun(url: string, id: string) {
  const done = await waitFor(
    'done',
    async () => {
      const task = (await api(url, 'GET', `/tasks/${id}`)).body;
      return task.status === 'done' ? task : null;
    },
    30_000,
  );
  expect(done.runs).toHaveLength(1);
  expect(done.runs[0].outcome).toBe('completed');
  return done;
}

async function runningTask(url: string) {
  const created = await api(url, 'POST', '/tasks', { title: 'survives restarts', assignee: 'w' });
  return waitFor('the worker to run', async () => {
    const task = (await api(url, 'GET', `/tasks/${created.body.id}`)).body;
    return task.runs[0]?.pid ? { id: created.body.id as string, run: task.runs[0] } : null;
  });
}

describe('workers across daemon restarts', () => {
  it('adopts a worker after the daemon is SIGKILLed; it completes with one run', async () => {
    const { dataDir, port, config } = await setup('wait-file', 'complete');
    const first = startDaemon({ dataDir, port, config });
    const url = await waitServing(dataDir, first.pid);
    const { id, run } = await runningTask(url);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(pidExists(run.pid)).toBe(true);

    const second = startDaemon({ dataDir, port, config });
    await waitServing(dataDir, second.pid);
    await waitFor('the adopted event', async () =>
      (await api(url, 'GET', `/tasks/${id}/events`)).body.events.some(
        (e: { kind: string }) => e.kind === 'adopted',
      ),
    );
    writeFileSync(join(dataDir, 'runs', run.id, 'go'), '');
    const done = await waitFor('done', async () => {
      const task = (await api(url, 'GET', `/tasks/${id}`)).body;
      return task.status === 'done' ? task : null;
    });
    expect(done.runs).toHaveLength(1);
    expect(done.runs[0]).toMatchObject({
      id: run.id,
      outcome: 'completed',
      summary: 'after the restart',
    });
  });

  it('classifies a worker that exited 3 while no daemon ran as crashed with exit code 3', async () => {
    const { dataDir, port, config } = await setup('wait-file', '3');
    const first = startDaemon({ dataDir, port, config });
    const url = await waitServing(dataDir, first.pid);
    const { id, run } = await runningTask(url);
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    expect(pidExists(run.pid)).toBe(true);
    writeFileSync(join(dataDir, 'runs', run.id, 'go'), '');
    await waitFor('the worker to end unwatched', () => !pidExists(run.pid));

    const second = startDaemon({ dataDir, port, config });
    await waitServing(dataDir, second.pid);
    const blocked = await waitFor('the crash to be classified', async () => {
      const task = (await api(url, 'GET', `/tasks/${id}`)).body;
      return task.status === 'blocked' ? task : null;
    });
    expect(blocked.runs).toHaveLength(1);
    expect(blocked.runs[0]).toMatchObject({ outcome: 'crashed', exitCode: 3, signal: null });
    const kinds = (await api(url, 'GET', `/tasks/${id}/events`)).body.events.map(
      (e: { kind: string }) => e.kind,
    );
    expect(kinds).not.toContain('adopted');
  });

  it('a worker helper that cannot reach the daemon retries, and its verdict lands at the next instance', async () => {
    const { dataDir, port, config, url, id, run } = await stoppedUnderAWorker(helperWorker());
    writeFileSync(join(dataDir, 'runs', run.id, 'go'), '');
    await waitFor('the helper retrying', () => helpersOf(run.id).length > 0);
    const second = startDaemon({ dataDir, port, config });
    await waitServing(dataDir, second.pid);
    const done = await doneWithOneCompletedRun(url, id);
    expect(done.summary).toBe('finished while gatehouse was away');
  });

  it('a verdict that cannot be delivered within --wait is left in result.json and counts', async () => {
    const { dataDir, port, config, url, id, run } = await stoppedUnderAWorker(
      helperWorker('--wait', '1s'),
    );
    writeFileSync(join(dataDir, 'runs', run.id, 'go'), '');
    await waitFor('the worker to exit', () => !pidExists(run.pid), 15_000);
    expect(existsSync(join(dataDir, 'runs', run.id, 'result.json'))).toBe(true);
    const second = startDaemon({ dataDir, port, config });
    await waitServing(dataDir, second.pid);
    const done = await doneWithOneCompletedRun(url, id);
    expect(done.runs[0].exitCode).toBe(0);
  });

  it('the demo worker finishes its task across a planned restart', async () => {
    const { dataDir, port, config, url, id } = await stoppedUnderAWorker({
      command: ['node', 'examples/workers/demo.mjs'],
      cwd: ROOT,
    });
    const second = startDaemon({ dataDir, port, config });
    await waitServing(dataDir, second.pid);
    await doneWithOneCompletedRun(url, id);
  });

  it('ends an unmarked child left by a worker that reported, exited while no daemon ran', async () => {
    const { dataDir, port, config } = await setupWith(profile('env-i-child-complete-wait'));
    const first = startDaemon({ dataDir, port, config });
    const url = await waitServing(dataDir, first.pid);
    const created = await api(url, 'POST', '/tasks', { title: 'leaves a child', assignee: 'w' });
    const done = await waitFor('done', async () => {
      const task = (await api(url, 'GET', `/tasks/${created.body.id}`)).body;
      return task.status === 'done' ? task : null;
    });
    const run = done.runs[0];
    const job = Number(
      await waitFor('the job pid', () => {
        try {
          return readFileSync(join(dataDir, 'runs', run.id, 'job'), 'utf8') || null;
        } catch {
          return null;
        }
      }),
    );
    first.child.kill('SIGKILL');
    await first.exited;
    writeFileSync(join(dataDir, 'runs', run.id, 'go'), '');
    await waitFor('the worker to exit unwatched', () => !pidExists(run.pid));
    expect(pidExists(job)).toBe(true);
    const second = startDaemon({ dataDir, port, config });
    await waitServing(dataDir, second.pid);
    const reaped = await waitFor('worker_terminated', async () =>
      (await api(url, 'GET', `/tasks/${created.body.id}/events`)).body.events.find(
        (e: { kind: string }) => e.kind === 'worker_terminated',
      ),
    );
    expect(reaped.payload.pids).toContain(job);
    expect(pidExists(job)).toBe(false);
    // How the worker ended while no daemon ran is recorded beside its verdict.
    const [after] = (await api(url, 'GET', `/tasks/${created.body.id}/runs`)).body.runs;
    expect(after).toMatchObject({ outcome: 'completed', exitCode: 0, signal: null });
  });
});
