import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { runTerminator } from '../../src/kanban/dispatch/run-terminator.js';
import { listProcesses, pidExists, readEnviron } from '../../src/proc/index.js';
import { api, startGateway } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';
import {
  createTask,
  eventsOf,
  getTask,
  grandchildPid,
  profile,
  settledIn,
  ticksPass,
} from '../helpers/workers.js';

const fast = { tickSeconds: 0.1, killGraceSeconds: 0.3, failureLimit: 2 };

function gatewayWith(profiles: Record<string, object>, workers: object = {}) {
  return startGateway({ workers: { ...fast, ...workers, profiles } }, { dispatch: true });
}

describe('exit classification, one row at a time', () => {
  it('completes a worker that reports through the API', async () => {
    const gw = await gatewayWith({ complete: profile('complete') });
    const task = await createTask(gw, { title: 'ok', assignee: 'complete' });
    const done = await settledIn(gw, task.id, 'done');
    expect(done).toMatchObject({
      summary: 'all done',
      result: { ok: true },
      consecutiveFailures: 0,
    });
    expect(done.runs).toHaveLength(1);
    expect(done.runs[0]).toMatchObject({ outcome: 'completed', profile: 'complete' });
  });

  it('records on each run the host that ran it: cluster.hostName, else the machine', async () => {
    const named = await startGateway(
      {
        cluster: { hostName: 'build-7' },
        workers: { ...fast, profiles: { complete: profile('complete') } },
      },
      { dispatch: true },
    );
    const task = await createTask(named, { title: 'where', assignee: 'complete' });
    expect((await settledIn(named, task.id, 'done')).runs[0].host).toBe('build-7');
    const plain = await gatewayWith({ complete: profile('complete') });
    const other = await createTask(plain, { title: 'here', assignee: 'complete' });
    expect((await settledIn(plain, other.id, 'done')).runs[0].host).toBe(hostname());
  });

  it('records how the process ended of a run whose verdict came first (API or archive)', async () => {
    // A grace long enough that a loaded machine never ends a reported worker before it exits.
    const gw = await gatewayWith(
      {
        then3: profile('complete-then-exit', {}, '3'),
        ok: profile('complete'),
        hang: profile('hang'),
      },
      { killGraceSeconds: 10 },
    );
    const then3 = await createTask(gw, { title: 'says done, exits 3', assignee: 'then3' });
    const ok = await createTask(gw, { title: 'says done, exits 0', assignee: 'ok' });
    const hang = await createTask(gw, { title: 'archived while it runs', assignee: 'hang' });
    const exitOf = (id: string, want: (run: any) => boolean) =>
      waitFor(`the exit status of ${id}`, async () => {
        const run = (await getTask(gw, id)).runs[0];
        return run && want(run) ? run : null;
      });
    expect(await exitOf(then3.id, (r) => r.exitCode !== null)).toMatchObject({
      outcome: 'completed',
      exitCode: 3,
      signal: null,
    });
    expect(await exitOf(ok.id, (r) => r.exitCode !== null)).toMatchObject({
      outcome: 'completed',
      exitCode: 0,
    });
    await waitFor('the hanging worker', async () => (await getTask(gw, hang.id)).runs[0]?.pid);
    expect((await api(gw.url, 'POST', `/tasks/${hang.id}/archive`)).status).toBe(200);
    expect(await exitOf(hang.id, (r) => r.signal !== null)).toMatchObject({
      outcome: 'archived',
      exitCode: null,
      signal: 'SIGTERM',
    });
  });

  it('blocks a worker that exits 0 without reporting, at once and without a respawn loop', async () => {
    const gw = await gatewayWith({ silent: profile('silent') });
    const task = await createTask(gw, { title: 'quiet', assignee: 'silent' });
    const blocked = await settledIn(gw, task.id, 'blocked');
    expect(blocked.runs).toHaveLength(1);
    expect(blocked.runs[0]).toMatchObject({ outcome: 'protocol_violation', exitCode: 0 });
    const kinds = (await eventsOf(gw, task.id)).map((e) => e.kind);
    expect(kinds).toContain('gave_up');
    // Several ticks later there is still only the one run.
    await ticksPass(gw);
    expect((await getTask(gw, task.id)).runs).toHaveLength(1);
  });

  it('cools a rate-limited worker (exit 75) down without counting it or dispatching it early', async () => {
    const gw = await gatewayWith(
      { limited: profile('exit', {}, '75') },
      { rateLimitCooldownSeconds: 60 },
    );
    const before = Date.now();
    const task = await createTask(gw, { title: 'busy api', assignee: 'limited' });
    const ready = await settledIn(gw, task.id, 'ready');
    expect(ready.runs).toHaveLength(1);
    expect(ready.runs[0].outcome).toBe('rate_limited');
    expect(ready.consecutiveFailures).toBe(0);
    expect(ready.notBefore).toBeGreaterThanOrEqual(before + 60_000);
    await ticksPass(gw);
    expect((await getTask(gw, task.id)).runs).toHaveLength(1);
  });

  it('gives up at once on exit 78', async () => {
    const gw = await gatewayWith({ misconfigured: profile('exit', {}, '78') });
    const task = await createTask(gw, { title: 'bad config', assignee: 'misconfigured' });
    const blocked = await settledIn(gw, task.id, 'blocked');
    expect(blocked.runs).toHaveLength(1);
    expect(blocked.runs[0]).toMatchObject({ outcome: 'crashed', exitCode: 78 });
    expect((await eventsOf(gw, task.id)).map((e) => e.kind)).toContain('gave_up');
  });

  it('retries a crash up to the failure limit, then gives up with the log tail as the error', async () => {
    const gw = await gatewayWith({ crash: profile('exit', {}, '3') });
    const task = await createTask(gw, { title: 'flaky', assignee: 'crash' });
    const blocked = await settledIn(gw, task.id, 'blocked');
    expect(blocked.runs.map((r: any) => [r.outcome, r.exitCode])).toEqual([
      ['crashed', 3],
      ['crashed', 3],
    ]);
    expect(blocked.consecutiveFailures).toBe(2);
    expect(blocked.lastFailureError).toContain('exit code 3');
    expect(blocked.lastFailureError).toContain('fatal: giving up with 3');
    expect(blocked.blockReason).toContain('gave up after 2 failures');
  });

  it('honours the task maxRetries over the failure limit', async () => {
    const gw = await gatewayWith({ crash: profile('exit', {}, '4') });
    const task = await createTask(gw, { title: 'three strikes', assignee: 'crash', maxRetries: 3 });
    expect((await settledIn(gw, task.id, 'blocked')).runs).toHaveLength(3);
  });

  it('records a worker killed by a signal as crashed with the signal', async () => {
    const gw = await gatewayWith({ kill: profile('self-kill') }, { failureLimit: 1 });
    const task = await createTask(gw, { title: 'boom', assignee: 'kill' });
    const blocked = await settledIn(gw, task.id, 'blocked');
    expect(blocked.runs[0]).toMatchObject({
      outcome: 'crashed',
      signal: 'SIGKILL',
      exitCode: null,
    });
  });

  it('takes result.json as the verdict of a worker that exits 0, and garbage in it as a violation', async () => {
    const gw = await gatewayWith({
      file: profile('result-done'),
      garbage: profile('result-garbage'),
    });
    const a = await createTask(gw, { title: 'by file', assignee: 'file' });
    const b = await createTask(gw, { title: 'bad file', assignee: 'garbage' });
    expect(await settledIn(gw, a.id, 'done')).toMatchObject({ summary: 'via file' });
    const bad = await settledIn(gw, b.id, 'blocked');
    expect(bad.runs[0].outcome).toBe('protocol_violation');
    expect(bad.runs[0].error).toContain('result.json is not valid JSON');
  });

  it('blocks a task whose worker blocks, with its reason', async () => {
    const gw = await gatewayWith({ block: profile('block', {}, 'needs credentials') });
    const task = await createTask(gw, { title: 'stuck', assignee: 'block' });
    expect(await settledIn(gw, task.id, 'blocked')).toMatchObject({
      blockReason: 'needs credentials',
    });
  });

  it('counts a worker that cannot start as spawn_failed with the OS error', async () => {
    const gw = await gatewayWith({
      missing: { command: ['no-such-program-anywhere'] },
      badcwd: { command: ['true'], cwd: '/no/such/dir' },
    });
    const a = await createTask(gw, { title: 'missing', assignee: 'missing' });
    const b = await createTask(gw, { title: 'bad cwd', assignee: 'badcwd' });
    const ta = await settledIn(gw, a.id, 'blocked');
    expect(ta.runs.map((r: any) => r.outcome)).toEqual(['spawn_failed', 'spawn_failed']);
    expect(ta.lastFailureError).toContain('not found on PATH (ENOENT)');
    const tb = await settledIn(gw, b.id, 'blocked');
    expect(tb.lastFailureError).toContain('/no/such/dir: ENOENT');
  });
});

describe('supervision', () => {
  it('runs a child only after its parent is done', async () => {
    const gw = await gatewayWith({ complete: profile('complete'), hang: profile('hang') });
    const parent = await createTask(gw, { title: 'first', assignee: 'hang' });
    const child = await createTask(gw, {
      title: 'second',
      assignee: 'complete',
      parents: [parent.id],
    });
    await waitFor(
      'the parent to run',
      async () => (await getTask(gw, parent.id)).status === 'running',
    );
    await ticksPass(gw);
    expect((await getTask(gw, child.id)).status).toBe('todo');
    // The parent's worker reports completion with its own run token, as a worker would.
    const run = (await getTask(gw, parent.id)).runs[0];
    const token = readEnviron(run.pid)
      ?.find((e) => e.startsWith('GATEHOUSE_RUN_TOKEN='))
      ?.slice('GATEHOUSE_RUN_TOKEN='.length);
    const done = await api(
      gw.url,
      'POST',
      `/tasks/${parent.id}/complete`,
      {},
      {
        authorization: `Bearer ${token}`,
      },
    );
    expect(done.status).toBe(200);
    expect((await settledIn(gw, child.id, 'done')).runs).toHaveLength(1);
  });

  it('times out a worker that ignores SIGTERM, ending it and its grandchild with SIGKILL', async () => {
    // Long enough for the worker to start its grandchild on a busy machine before it is timed out.
    const gw = await gatewayWith(
      { stubborn: profile('stubborn', { maxRuntimeSeconds: 3 }) },
      { failureLimit: 1 },
    );
    const task = await createTask(gw, { title: 'hangs', assignee: 'stubborn' });
    // The run is claimed, then its spawn recorded: wait for its pid.
    const running = await waitFor('a run with a pid', async () =>
      (await getTask(gw, task.id)).runs.find((r: { pid: number | null }) => r.pid),
    );
    const grandchild = await grandchildPid(gw, running.id);
    const blocked = await settledIn(gw, task.id, 'blocked');
    expect(blocked.runs[0].outcome).toBe('timed_out');
    const timedOut = (await eventsOf(gw, task.id)).find((e) => e.kind === 'timed_out')!;
    expect(timedOut.payload).toMatchObject({
      prevPid: running.pid,
      terminated: true,
      sigkill: true,
      survived: false,
    });
    expect(pidExists(running.pid)).toBe(false);
    expect(pidExists(grandchild)).toBe(false);
  });

  it('archives a running task by killing its whole process group, and says so', async () => {
    const gw = await gatewayWith({ stubborn: profile('stubborn') });
    const task = await createTask(gw, { title: 'to archive', assignee: 'stubborn' });
    const run = await waitFor(
      'a run with a pid',
      async () => (await getTask(gw, task.id)).runs[0]?.pid && (await getTask(gw, task.id)).runs[0],
    );
    const grandchild = await grandchildPid(gw, run.id);
    const res = await api(gw.url, 'POST', `/tasks/${task.id}/archive`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('archived');
    const archived = (await eventsOf(gw, task.id)).find((e) => e.kind === 'archived')!;
    expect(archived.payload).toMatchObject({
      prevPid: run.pid,
      terminated: true,
      sigkill: true,
      survived: false,
    });
    expect(pidExists(grandchild)).toBe(false);
    expect((await getTask(gw, task.id)).runs[0].outcome).toBe('archived');
  });

  it('archives a task claimed a moment ago, its run folder still being written: its worker does not outlive the archive', async () => {
    const gw = await gatewayWith({ hang: profile('hang') });
    let archiving: Promise<{ status: string }> | undefined;
    let runId: string | null = null;
    // Told as the claim commits, when the launch has only begun writing the run's folder.
    const unsubscribe = gw.kanban.board.bus.subscribe((event) => {
      if (event.kind !== 'claimed' || event.taskId === null || archiving) return;
      runId = event.runId;
      archiving = gw.kanban.operator.archive(event.taskId);
    });
    const task = await createTask(gw, { title: 'archived at its claim', assignee: 'hang' });
    await waitFor('the claim', async () => archiving !== undefined);
    unsubscribe();
    expect((await archiving!).status).toBe('archived');
    // The launch has ended either way: no worker of the run may be running now.
    await gw.kanban.launching.settled(runId!);
    const marker = `GATEHOUSE_RUN_ID=${runId}`;
    const left = listProcesses().filter((p) => readEnviron(p.pid)?.includes(marker));
    expect(left.map((p) => `${p.pid} ${p.state}`)).toEqual([]);
    const run = (await getTask(gw, task.id)).runs[0];
    expect(run.outcome).toBe('archived');
  });

  it('starts the next task as soon as an archive has ended the running one, not at the next tick', async () => {
    // The tick is a minute away: only the archive itself can free the one slot in time.
    const gw = await gatewayWith(
      { hang: profile('hang'), complete: profile('complete') },
      { tickSeconds: 60, maxConcurrent: 1 },
    );
    const first = await createTask(gw, { title: 'busy', assignee: 'hang' });
    await waitFor('the first to run', async () => (await getTask(gw, first.id)).worker !== null);
    const next = await createTask(gw, { title: 'waits for the slot', assignee: 'complete' });
    expect((await api(gw.url, 'POST', `/tasks/${first.id}/archive`)).status).toBe(200);
    await settledIn(gw, next.id, 'done', 20_000);
  });

  it('ends background jobs a finished worker left in its group, unless the profile keeps them', async () => {
    const gw = await gatewayWith({
      leaves: profile('leave-background'),
      keeps: profile('leave-background', { keepDescendants: true }),
    });
    const task = await createTask(gw, { title: 'messy', assignee: 'leaves' });
    await settledIn(gw, task.id, 'done');
    const ended = await waitFor('worker_terminated', async () =>
      (await eventsOf(gw, task.id)).find((e) => e.kind === 'worker_terminated'),
    );
    expect(ended.payload.pids.length).toBeGreaterThan(0);
    for (const pid of ended.payload.pids) expect(pidExists(pid)).toBe(false);

    const kept = await createTask(gw, { title: 'tidy on purpose', assignee: 'keeps' });
    await settledIn(gw, kept.id, 'done');
    await ticksPass(gw);
    expect((await eventsOf(gw, kept.id)).map((e) => e.kind)).not.toContain('worker_terminated');
  });

  it('keeps the reason of a timeout that had to be resumed', async () => {
    // The first attempt finds a survivor (the termination is deferred); the tick resumes it.
    const real = runTerminator({ graceMs: 300, killWaitMs: 5000 });
    let attempts = 0;
    const gw = await startGateway(
      { workers: { ...fast, profiles: { hang: profile('hang', { maxRuntimeSeconds: 0.2 }) } } },
      {
        dispatch: true,
        terminator: async (run, held) =>
          attempts++ === 0
            ? { terminated: false, sigkill: true, survived: true, ended: [], survivors: [1] }
            : real(run, held),
      },
    );
    const task = await createTask(gw, { title: 'slow', assignee: 'hang' });
    const settled = await waitFor('the timeout to settle', async () => {
      const t = await getTask(gw, task.id);
      return t.runs[0]?.outcome === 'timed_out' && t;
    });
    expect(attempts).toBeGreaterThan(1);
    expect(settled.runs[0].error).toBe('exceeded its max runtime of 0.2s');
  });

  it('never starts a second worker beside one that survived termination; only reclaim --force releases it', async () => {
    // Each attempt takes a while, as signalling and waiting out a group does: the operator's
    // forced reclaim meets a tick's retry in progress and is carried out after it.
    const survivor = async () => {
      await sleep(150);
      return { terminated: false, sigkill: true, survived: true, ended: [], survivors: [1] };
    };
    const gw = await startGateway(
      { workers: { ...fast, profiles: { hang: profile('hang') } } },
      { dispatch: true, terminator: survivor },
    );
    const task = await createTask(gw, { title: 'immortal', assignee: 'hang' });
    await waitFor('running', async () => (await getTask(gw, task.id)).status === 'running');
    const refused = await api(gw.url, 'POST', `/tasks/${task.id}/reclaim`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('WORKER_SURVIVED');
    const deferred = (await eventsOf(gw, task.id)).filter((e) => e.kind === 'reclaim_deferred');
    expect(deferred).toHaveLength(1);
    await ticksPass(gw);
    const still = await getTask(gw, task.id);
    expect(still.status).toBe('running');
    expect(still.runs).toHaveLength(1);
    const forced = await api(gw.url, 'POST', `/tasks/${task.id}/reclaim`, { force: true });
    expect(forced.status).toBe(200);
    await waitFor(
      'a second run after the forced reclaim',
      async () => (await getTask(gw, task.id)).runs.length === 2,
    );
  });

  it('holds the global and per-profile concurrency caps', async () => {
    const gw = await gatewayWith(
      { hang: profile('hang'), solo: profile('hang', { maxConcurrent: 1 }) },
      { maxConcurrent: 2 },
    );
    for (let i = 0; i < 4; i++) await createTask(gw, { title: `h${i}`, assignee: 'hang' });
    await waitFor('two running', async () => (await gw.kanban.board.counts()).running === 2);
    // A claim's worker starts in the background (its folder written, then the spawn): under
    // load that may take more than a few ticks, and its slot is held meanwhile.
    await waitFor('two live workers', () => gw.dispatcher.liveCount() === 2);
    await ticksPass(gw);
    expect(await gw.kanban.board.counts()).toMatchObject({ running: 2, ready: 2 });
    expect(gw.dispatcher.liveCount()).toBe(2);
  });

  it('keeps the per-profile cap below the global one', async () => {
    const gw = await gatewayWith(
      { solo: profile('hang', { maxConcurrent: 1 }) },
      { maxConcurrent: 5 },
    );
    for (let i = 0; i < 3; i++) await createTask(gw, { title: `s${i}`, assignee: 'solo' });
    await waitFor('one running', async () => (await gw.kanban.board.counts()).running === 1);
    await waitFor('its worker live', () => gw.dispatcher.liveByProfile().solo === 1);
    await ticksPass(gw);
    expect(await gw.kanban.board.counts()).toMatchObject({ running: 1, ready: 2 });
    expect(gw.dispatcher.liveByProfile().solo).toBe(1);
  });

  it('starts a task of another profile at once while 150 tasks wait for a capped one', async () => {
    const gw = await gatewayWith(
      { solo: profile('hang', { maxConcurrent: 1 }), quick: profile('complete') },
      { maxConcurrent: 4 },
    );
    for (let i = 0; i < 150; i++)
      await gw.kanban.board.create({ title: `queued ${i}`, assignee: 'solo' }, { kind: 'api' });
    await waitFor(
      'the capped profile at its cap',
      async () => (await gw.kanban.board.counts()).running === 1,
    );
    const other = await createTask(gw, { title: 'not stuck behind them', assignee: 'quick' });
    await settledIn(gw, other.id, 'done');
    expect(await gw.kanban.board.counts()).toMatchObject({ running: 1, ready: 149 });
  });

  it('pauses dispatch with maxConcurrent 0', async () => {
    const gw = await gatewayWith({ complete: profile('complete') }, { maxConcurrent: 0 });
    const task = await createTask(gw, { title: 'waits', assignee: 'complete' });
    await ticksPass(gw);
    expect((await getTask(gw, task.id)).runs).toHaveLength(0);
  });

  it('extends the lease of a live worker and releases one whose heartbeat went stale', async () => {
    const gw = await gatewayWith(
      { beating: profile('heartbeat-always'), once: profile('heartbeat-once') },
      // A lease of a second, beaten every 100 ms: a busy machine that holds a heartbeat back
      // for a few hundred ms must not make the live one stale.
      { claimTtlSeconds: 1, heartbeatMaxStaleSeconds: 1.5, failureLimit: 1 },
    );
    const alive = await createTask(gw, { title: 'alive', assignee: 'beating' });
    const stale = await createTask(gw, { title: 'stale', assignee: 'once' });
    await waitFor('a lease extension', async () =>
      (await eventsOf(gw, alive.id)).some((e) => e.kind === 'claim_extended'),
    );
    const blocked = await settledIn(gw, stale.id, 'blocked');
    expect(blocked.runs[0].outcome).toBe('stale');
    expect((await getTask(gw, alive.id)).status).toBe('running');
  });

  it('shows the live worker and its resource samples on GET /tasks/:id', async () => {
    const gw = await gatewayWith({ hang: profile('hang') });
    const task = await createTask(gw, { title: 'watched', assignee: 'hang' });
    // The sample is in memory at once; the run's pid once its spawn is committed (on
    // PostgreSQL that can come a moment later). A first sample may catch the wrapper alone
    // (128 KiB, seen on a busy Node 24 run), before its node worker is there: the worker's
    // own memory is waited for.
    const shown = await waitFor('a sampled worker of a recorded run', async () => {
      const t = await getTask(gw, task.id);
      return t.worker?.rssBytes > 1_000_000 && t.runs[0]?.pid ? t : null;
    });
    expect(shown.worker.pid).toBe(shown.runs[0].pid);
    await waitFor('run maxima', async () => (await getTask(gw, task.id)).runs[0].rssBytesMax > 0);
  });
});
