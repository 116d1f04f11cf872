import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/kanban/store/sqlite/db.js';
import { readCmdline, readEnviron } from '../../src/proc/index.js';
import { api } from '../helpers/app.js';
import { freePort, startDaemon, tempDir, waitServing, writeConfig } from '../helpers/daemon.js';
import { markedPids, type Spawned } from '../helpers/procs.js';
import { waitFor } from '../helpers/wait.js';
import { FIXTURE, profile } from '../helpers/workers.js';

const TASKS = 200;
const RESTARTS = 4;

/** The runs with a live process (wrapper, worker or child), by the task they work on. */
function workersByTask(): Map<string, Set<string>> {
  const byTask = new Map<string, Set<string>>();
  for (const pid of markedPids()) {
    const env = readEnviron(pid);
    const taskId = env?.find((e) => e.startsWith('GATEHOUSE_TASK_ID='))?.slice(18);
    const runId = env?.find((e) => e.startsWith('GATEHOUSE_RUN_ID='))?.slice(17);
    if (taskId && runId) byTask.set(taskId, (byTask.get(taskId) ?? new Set()).add(runId));
  }
  return byTask;
}

/** Live workers whose run id makes the `random` fixture hang (its choice 6 of 8). */
function hangingWorkers(): number {
  let n = 0;
  for (const pid of markedPids()) {
    if (!readCmdline(pid)?.includes(FIXTURE)) continue;
    const runId = readEnviron(pid)
      ?.find((e) => e.startsWith('GATEHOUSE_RUN_ID='))
      ?.slice(17);
    if (runId && parseInt(runId.slice(2, 10), 16) % 8 === 6) n++;
  }
  return n;
}

describe('chaos', () => {
  it(`keeps every promise over ${TASKS} random workers while the daemon is killed and restarted ${RESTARTS} times`, async () => {
    const dataDir = tempDir();
    const port = await freePort();
    const config = writeConfig(tempDir(), {
      workers: {
        tickSeconds: 0.1,
        maxConcurrent: 16,
        failureLimit: 3,
        killGraceSeconds: 0.2,
        rateLimitCooldownSeconds: 0.3,
        claimTtlSeconds: 5,
        profiles: { chaos: profile('random', { maxRuntimeSeconds: 1, maxConcurrent: 16 }) },
        defaultProfile: 'chaos',
      },
    });
    let daemon: Spawned = startDaemon({ dataDir, port, config });
    const url = await waitServing(dataDir, daemon.pid);
    for (let i = 0; i < TASKS; i++) {
      expect((await api(url, 'POST', '/tasks', { title: `chaos ${i}` })).status).toBe(201);
    }

    // Sample the process table throughout: never two live workers for one task.
    const doubles: string[] = [];
    let samples = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const [task, runs] of workersByTask())
          if (runs.size > 1) doubles.push(`${task}: ${[...runs].join(',')}`);
        samples++;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();

    for (let round = 0; round < RESTARTS; round++) {
      // Restart only while a worker that hangs until killed is running: it is sure to outlive
      // this daemon, so the restart really hits a running worker and the next one adopts it.
      await waitFor('a hanging worker to outlive the daemon', () => hangingWorkers() > 0, 60_000);
      if (round % 2 === 0) {
        daemon.child.kill('SIGKILL');
        await daemon.exited;
        daemon = startDaemon({ dataDir, port, config });
      } else {
        const next = startDaemon({ dataDir, port, config, replace: true });
        expect((await daemon.exited).code).toBe(0);
        daemon = next;
      }
      await waitServing(dataDir, daemon.pid);
    }

    await waitFor(
      'every task to settle in done or blocked',
      async () => {
        const res = await api(url, 'GET', '/ready');
        const board = res.body.board;
        return board && board.done + board.blocked === TASKS;
      },
      120_000,
      200,
    );
    daemon.child.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
    // Every task settled, so every run ended after its processes: the last verdict-givers exit by themselves.
    await waitFor('every worker process to be gone', () => workersByTask().size === 0, 30_000);
    sampling = false;
    await sampler;

    expect(samples).toBeGreaterThan(20);
    expect(doubles).toEqual([]);

    const db = openDatabase(join(dataDir, 'gatehouse.db'));
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const tasks = db.prepare('SELECT id, status FROM tasks').all() as {
      id: string;
      status: string;
    }[];
    expect(tasks).toHaveLength(TASKS);
    const runs = db
      .prepare('SELECT id, task_id, outcome, ended_at FROM runs ORDER BY seq')
      .all() as {
      id: string;
      task_id: string;
      outcome: string | null;
      ended_at: number | null;
    }[];
    expect(runs.filter((r) => r.outcome === null || r.ended_at === null)).toEqual([]);
    const events = db.prepare('SELECT task_id, run_id, kind FROM events ORDER BY id').all() as {
      task_id: string;
      run_id: string | null;
      kind: string;
    }[];
    for (const run of runs) {
      const own = events.filter((e) => e.run_id === run.id);
      expect(
        own.filter((e) => e.kind === 'claimed'),
        run.id,
      ).toHaveLength(1);
      expect(
        own.filter((e) => e.kind === run.outcome),
        `${run.id} ${run.outcome}`,
      ).toHaveLength(1);
    }
    // The restarts really hit running workers: some were adopted by a later instance.
    expect(events.filter((e) => e.kind === 'adopted').length).toBeGreaterThan(0);
    for (const task of tasks) {
      const last = runs.filter((r) => r.task_id === task.id).at(-1);
      if (task.status === 'done') expect(last?.outcome).toBe('completed');
      else expect(task.status).toBe('blocked');
    }
    db.close();
  }, 240_000);
});
