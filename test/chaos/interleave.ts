// A seeded, randomized interleaving of worker behaviours and operator/daemon actions against
// the real daemon, with the process table sampled throughout. The same seed replays the same
// actions (their timing still depends on the machine). Used by interleaving.test.ts (a short
// run) and `npm run soak:interleave` (a long one).
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { identityOf, readEnviron, readProcStat } from '../../src/proc/index.js';
import { api } from '../helpers/app.js';
import { freePort, startDaemon, tempDir, waitServing, writeConfig } from '../helpers/daemon.js';
import { markedPids, type Spawned } from '../helpers/procs.js';
import { boardReader, storeConfig } from '../helpers/store.js';
import { waitFor } from '../helpers/wait.js';
import { profile } from '../helpers/workers.js';

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BEHAVIOURS: Record<string, object> = {
  complete: profile('complete'),
  silent: profile('silent'),
  crash: profile('exit', {}, '1'),
  limited: profile('exit', {}, '75'),
  stubborn: profile('stubborn', { maxRuntimeSeconds: 1.5 }),
  setsid: profile('setsid-job-complete', {}, '200'),
  envi: profile('env-i-child-complete'),
  'complete-crash': profile('complete-then-exit', {}, '1'),
  hang: profile('hang', { maxRuntimeSeconds: 2 }),
};

const ACTIONS = [
  'create',
  'create',
  'create',
  'archive',
  'reclaim',
  'kill-worker',
  'kill-daemon',
  'replace',
] as const;

export interface CaseReport {
  seed: number;
  actions: number;
  samples: number;
  tasks: number;
  runs: number;
  violations: string[];
}

interface RunProcess {
  pid: number;
  taskId: string;
  runId: string;
}

/** Live processes of this test file's runs (workers, their children and jobs), by env. */
function runProcesses(): RunProcess[] {
  const found: RunProcess[] = [];
  for (const pid of markedPids()) {
    const env = readEnviron(pid);
    const runId = env?.find((e) => e.startsWith('GATEHOUSE_RUN_ID='))?.slice(17);
    const taskId = env?.find((e) => e.startsWith('GATEHOUSE_TASK_ID='))?.slice(18);
    if (runId && taskId && identityOf(pid)) found.push({ pid, taskId, runId });
  }
  return found;
}

export async function runCase(
  seed: number,
  actionCount: number,
  engine: 'sqlite' | 'postgres' = 'sqlite',
): Promise<CaseReport> {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const dataDir = tempDir();
  const port = await freePort();
  const config = writeConfig(tempDir(), {
    store: storeConfig(engine, dataDir),
    workers: {
      tickSeconds: 0.1,
      maxConcurrent: 6,
      failureLimit: 2,
      killGraceSeconds: 0.2,
      rateLimitCooldownSeconds: 0.2,
      profiles: BEHAVIOURS,
      defaultProfile: 'complete',
    },
  });
  const daemons: Spawned[] = [];
  const start = (replace = false) => {
    const started = startDaemon({ dataDir, port, config, replace });
    daemons.push(started);
    return started;
  };
  let daemon = start();
  const url = await waitServing(dataDir, daemon.pid);
  const found = new Set<string>();
  const violate = (what: string) => {
    if (found.size < 50) found.add(`seed ${seed}: ${what}`);
  };
  const reader = boardReader(engine, dataDir);

  let samples = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      // The board first, then the processes: a process alive now whose run was already
      // recorded gone is a process that outlived its run.
      const gone = new Set(
        (
          await reader.all<{ id: string }>('SELECT id FROM runs WHERE proc_gone_at IS NOT NULL')
        ).map((r) => r.id),
      );
      const byTask = new Map<string, Set<string>>();
      for (const p of runProcesses()) {
        if (gone.has(p.runId)) violate(`pid ${p.pid} of settled run ${p.runId} is alive`);
        byTask.set(p.taskId, (byTask.get(p.taskId) ?? new Set()).add(p.runId));
      }
      for (const [task, runs] of byTask)
        if (runs.size > 1)
          violate(`task ${task} has processes of ${runs.size} runs: ${[...runs].join(', ')}`);
      samples++;
      await new Promise((r) => setTimeout(r, 20));
    }
  })();

  const taskIds: string[] = [];
  const running = async () =>
    ((await api(url, 'GET', '/tasks?status=running')).body.tasks as {
      id: string;
      currentRunId: string;
    }[]) ?? [];
  for (let i = 0; i < actionCount; i++) {
    const action = i < 3 ? 'create' : pick(ACTIONS);
    if (action === 'create') {
      const res = await api(url, 'POST', '/tasks', {
        title: `interleave ${i}`,
        assignee: pick(Object.keys(BEHAVIOURS)),
      });
      if (res.status === 201) taskIds.push(res.body.id);
    } else if (action === 'archive' && taskIds.length > 0) {
      await api(url, 'POST', `/tasks/${pick(taskIds)}/archive`);
    } else if (action === 'reclaim') {
      const busy = await running();
      if (busy.length > 0) await api(url, 'POST', `/tasks/${pick(busy).id}/reclaim`);
    } else if (action === 'kill-worker') {
      const busy = await running();
      const run = busy.length > 0 ? pick(busy).currentRunId : null;
      const leader = runProcesses().find(
        (p) => p.runId === run && readProcStat(p.pid)?.pgid === p.pid,
      );
      if (leader) process.kill(leader.pid, 'SIGKILL');
    } else if (action === 'kill-daemon') {
      daemon.child.kill('SIGKILL');
      await daemon.exited;
      daemon = start();
      await waitServing(dataDir, daemon.pid);
    } else if (action === 'replace') {
      const next = start(true);
      await daemon.exited;
      daemon = next;
      await waitServing(dataDir, daemon.pid);
    }
    await new Promise((r) => setTimeout(r, Math.floor(random() * 150)));
  }

  // Wind down: archive everything, then wait until nothing of any run is alive.
  for (const id of taskIds) {
    await waitFor(
      `task ${id} archived`,
      async () => {
        const res = await api(url, 'POST', `/tasks/${id}/archive`);
        return res.status === 200 || /is archived/.test(res.body?.error?.message ?? '');
      },
      30_000,
    );
  }
  try {
    await waitFor(
      'every process of every run to be gone',
      () => runProcesses().length === 0,
      30_000,
    );
  } catch {
    for (const p of runProcesses())
      violate(`pid ${p.pid} of run ${p.runId} outlived the archive of its task`);
  }
  sampling = false;
  await sampler;

  const runs = await reader.all<{
    id: string;
    task_id: string;
    outcome: string | null;
    ended_at: number | null;
  }>('SELECT id, task_id, outcome, ended_at FROM runs');
  const outcomeEvents = await reader.all<{ run_id: string; n: number }>(
    `SELECT run_id, count(*) AS n FROM events WHERE run_id IS NOT NULL AND kind IN
      ('completed','blocked','crashed','protocol_violation','rate_limited','timed_out','stale',
       'reclaimed','archived','spawn_failed','interrupted') GROUP BY run_id`,
  );
  const eventsOf = new Map(outcomeEvents.map((e) => [e.run_id, e.n]));
  for (const run of runs) {
    if (run.outcome === null || run.ended_at === null) violate(`run ${run.id} never ended`);
    if (Number(eventsOf.get(run.id)) !== 1)
      violate(`run ${run.id} has ${eventsOf.get(run.id) ?? 0} outcome events`);
  }
  const stuck = await reader.all<{ id: string }>("SELECT id FROM tasks WHERE status = 'running'");
  for (const { id } of stuck) {
    const history = await reader.all<{ id: number; kind: string; run_id: string | null }>(
      `SELECT id, kind, run_id FROM events WHERE task_id = '${id}' ORDER BY id`,
    );
    violate(
      `task ${id} still running with nothing alive: ${history.map((e) => `${e.id} ${e.kind} ${e.run_id ?? ''}`).join(', ')}`,
    );
  }
  await reader.close();
  daemon.child.kill('SIGTERM');
  await daemon.exited;
  if (found.size > 0) {
    // The daemons' own account of the case, kept past the test's temporary directories.
    const log = join(tmpdir(), `gatehouse-interleave-${seed}.log`);
    writeFileSync(
      log,
      daemons.map((d, i) => `=== daemon ${i + 1}, pid ${d.pid}\n${d.output()}`).join('\n'),
    );
    found.add(`seed ${seed}: daemon output in ${log}`);
  }
  return {
    seed,
    actions: actionCount,
    samples,
    tasks: taskIds.length,
    runs: runs.length,
    violations: [...found],
  };
}
