// The supervision promises at their edges (docs/workers.md): never two workers, nothing outlives its
// run, and an ending is recorded as what it was, whatever fails on the way. Real processes.
import { failUpdates } from '../helpers/store.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { RunTerminator } from '../../src/kanban/dispatch/run-terminator.js';
import { runTerminator } from '../../src/kanban/dispatch/run-terminator.js';
import { pidExists } from '../../src/proc/index.js';
import { api, startGateway } from '../helpers/app.js';
import { claim } from '../helpers/board.js';
import { waitFor } from '../helpers/wait.js';
import {
  createTask,
  eventsOf,
  getTask,
  grandchildPid,
  pidFromRunFile,
  profile,
  settledIn,
  ticksPass,
} from '../helpers/workers.js';

const fast = { tickSeconds: 0.1, killGraceSeconds: 0.3, failureLimit: 5 };

function gatewayWith(
  profiles: Record<string, object>,
  extra: Parameters<typeof startGateway>[1] = {},
) {
  return startGateway({ workers: { ...fast, profiles } }, { dispatch: true, ...extra });
}

async function runningRun(gw: Awaited<ReturnType<typeof gatewayWith>>, taskId: string) {
  return waitFor('a running worker', async () => {
    const task = await getTask(gw, taskId);
    return task.status === 'running' && task.runs.at(-1)?.pid ? task.runs.at(-1) : null;
  });
}

describe('never two workers', () => {
  it('ends the rest of a SIGKILLed leader’s group before the task is settled and claimed again', async () => {
    const gw = await gatewayWith({ stubborn: profile('stubborn') });
    const task = await createTask(gw, { title: 'leader killed', assignee: 'stubborn' });
    const first = await runningRun(gw, task.id);
    const member = await grandchildPid(gw, first.id);
    process.kill(first.pid, 'SIGKILL');
    const second = await waitFor('a second run', async () => (await getTask(gw, task.id)).runs[1]);
    // By the time a second run exists, nothing of the first is alive.
    expect(pidExists(member)).toBe(false);
    const kinds = (await eventsOf(gw, task.id)).map((e) => `${e.kind}:${e.runId}`);
    const reaped = kinds.indexOf(`worker_terminated:${first.id}`);
    expect(reaped).toBeGreaterThan(-1);
    expect(reaped).toBeLessThan(kinds.indexOf(`crashed:${first.id}`));
    expect(kinds.indexOf(`crashed:${first.id}`)).toBeLessThan(
      kinds.indexOf(`claimed:${second.id}`),
    );
  });

  it('counts a worker that forged its wrapper\'s "not started" record and killed the wrapper as the crash it is', async () => {
    const gw = await gatewayWith({
      forger: {
        command: [
          '/bin/sh',
          '-c',
          `printf '{"status":125,"started":false}' > "$GATEHOUSE_RUN_DIR/exit.json"; kill -9 $PPID; exit 0`,
        ],
      },
    });
    const task = await createTask(gw, { title: 'forger', assignee: 'forger', maxRetries: 1 });
    const run = await waitFor('the run ended', async () => {
      const r = (await getTask(gw, task.id)).runs[0];
      return r?.endedAt ? r : null;
    });
    expect(run).toMatchObject({ outcome: 'crashed', signal: 'SIGKILL' });
    expect((await getTask(gw, task.id)).status).toBe('blocked');
  });

  it('keeps the claim with reclaim_deferred while a leftover of an ended worker survives', async () => {
    let survive = true;
    const real = runTerminator({ graceMs: 300, killWaitMs: 2000 });
    const terminator: RunTerminator = async (run, held) =>
      survive
        ? { terminated: false, sigkill: true, survived: true, ended: [], survivors: [4242] }
        : real(run, held);
    const gw = await gatewayWith({ crash: profile('exit', {}, '3') }, { terminator });
    const task = await createTask(gw, { title: 'leftover will not die', assignee: 'crash' });
    await waitFor('reclaim_deferred', async () =>
      (await eventsOf(gw, task.id)).some((e) => e.kind === 'reclaim_deferred'),
    );
    await ticksPass(gw);
    const held = await getTask(gw, task.id);
    expect(held.status).toBe('running');
    expect(held.runs).toHaveLength(1);
    expect((await eventsOf(gw, task.id)).filter((e) => e.kind === 'reclaim_deferred')).toHaveLength(
      1,
    );
    survive = false;
    const released = await waitFor('the run settled', async () => {
      const t = await getTask(gw, task.id);
      return t.runs[0].outcome ? t : null;
    });
    expect(released.runs[0]).toMatchObject({ outcome: 'crashed', exitCode: 3 });
  });
});

describe('nothing outlives its run', () => {
  it('archive ends a background job that left the group with setsid, and says so truthfully', async () => {
    const gw = await gatewayWith({ setsid: profile('setsid-job') });
    const task = await createTask(gw, { title: 'has a daemonised job', assignee: 'setsid' });
    const run = await runningRun(gw, task.id);
    const job = await pidFromRunFile(gw, run.id, 'job');
    await waitFor('the job alive in its own session', () => pidExists(job));
    const res = await api(gw.url, 'POST', `/tasks/${task.id}/archive`);
    expect(res.status).toBe(200);
    expect(pidExists(job)).toBe(false);
    const archived = (await eventsOf(gw, task.id)).find((e) => e.kind === 'archived')!;
    expect(archived.payload).toMatchObject({ terminated: true, survived: false });
    expect(archived.payload.ended).toContain(job);
  });

  it('ends an unmarked child (env -i) the worker left in its group when the worker ends', async () => {
    const gw = await gatewayWith({ envi: profile('env-i-child-complete') });
    const task = await createTask(gw, { title: 'leaves an env -i child', assignee: 'envi' });
    const done = await settledIn(gw, task.id, 'done');
    const job = await pidFromRunFile(gw, done.runs[0].id, 'job');
    const reaped = await waitFor('worker_terminated', async () =>
      (await eventsOf(gw, task.id)).find((e) => e.kind === 'worker_terminated'),
    );
    expect(reaped.payload).toMatchObject({ survived: false });
    expect(reaped.payload.pids).toContain(job);
    expect(pidExists(job)).toBe(false);
  });
});

describe('a worker that gave its verdict', () => {
  it('gets killGraceSeconds to exit, then is ended, and its slot freed', async () => {
    const gw = await gatewayWith({ stays: profile('complete-then-hang') }, {});
    const task = await createTask(gw, { title: 'said done, stays', assignee: 'stays' });
    const done = await settledIn(gw, task.id, 'done');
    const reaped = await waitFor('worker_terminated', async () =>
      (await eventsOf(gw, task.id)).find((e) => e.kind === 'worker_terminated'),
    );
    expect(reaped.payload.pids).toContain(done.runs[0].pid);
    await waitFor('its slot freed', () => gw.dispatcher.liveCount() === 0);
  });
});

describe('an ending is recorded as what it was', () => {
  it('a deferred reclaim is retried each tick and ends as reclaimed, never as a crash', async () => {
    let refusals = 1;
    const real = runTerminator({ graceMs: 300, killWaitMs: 2000 });
    const terminator: RunTerminator = async (run, held) => {
      if (refusals-- > 0)
        return {
          terminated: false,
          sigkill: true,
          survived: true,
          ended: [],
          survivors: [run.pid!],
        };
      return real(run, held);
    };
    const gw = await gatewayWith({ stubborn: profile('stubborn') }, { terminator });
    const task = await createTask(gw, { title: 'stuck', assignee: 'stubborn' });
    await runningRun(gw, task.id);
    const refused = await api(gw.url, 'POST', `/tasks/${task.id}/reclaim`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/retried each tick/);
    const reclaimed = await waitFor('the reclaim to land', async () => {
      const t = await getTask(gw, task.id);
      return t.runs[0].outcome ? t : null;
    });
    expect(reclaimed.runs[0].outcome).toBe('reclaimed');
    expect(reclaimed.consecutiveFailures).toBe(0);
    expect(reclaimed.blockReason).toBeNull();
    expect((await eventsOf(gw, task.id)).map((e) => e.kind)).not.toContain('crashed');
  });

  it('settles a run whose first settlement failed from what was recorded, on the next tick', async () => {
    const gw = await gatewayWith({ crash: profile('wait-file', {}, '3') });
    const task = await createTask(gw, { title: 'disk trouble', assignee: 'crash' });
    const run = await runningRun(gw, task.id);
    // The disk fails every write that would close a run, as a full disk would.
    const healed = await failUpdates(gw.dataDir, 'runs', 'outcome', 'simulated disk failure');
    writeFileSync(join(gw.dataDir, 'runs', run.id, 'go'), '');
    await waitFor('the worker to exit', () => !pidExists(run.pid));
    await ticksPass(gw);
    expect((await getTask(gw, task.id)).status).toBe('running');
    await healed();
    const settled = await waitFor('the run settled', async () => {
      const t = await getTask(gw, task.id);
      return t.runs[0].outcome ? t : null;
    });
    expect(settled.runs[0]).toMatchObject({ outcome: 'crashed', exitCode: 3 });
  });

  it('logs a failure that repeats every tick once, with its stack, not once a tick', async () => {
    const lines: { msg: string; err?: { stack?: string } }[] = [];
    const logger = pino(
      { level: 'info' },
      { write: (line: string) => lines.push(JSON.parse(line)) },
    );
    const gw = await gatewayWith({ hang: profile('hang') }, { logger });
    const task = await createTask(gw, { title: 'sampled every tick', assignee: 'hang' });
    await runningRun(gw, task.id);
    // Every tick's resource sample is written; the disk refuses each write, as a full one would.
    const healed = await failUpdates(gw.dataDir, 'runs', 'rss_bytes_max', 'simulated full disk');
    try {
      await ticksPass(gw, 20);
    } finally {
      await healed();
    }
    const failures = lines.filter((l) => l.msg === 'dispatcher: sample failed');
    expect(failures).toHaveLength(1);
    expect(failures[0]!.err?.stack).toMatch(/simulated full disk/);
  });

  it('refuses a result.json nested deeper than 64 levels with a reason, and such an API body with 400', async () => {
    const gw = await gatewayWith({ deep: profile('deep-result', {}, '0') });
    const task = await createTask(gw, { title: 'deep', assignee: 'deep' });
    const blocked = await settledIn(gw, task.id, 'blocked');
    expect(blocked.runs[0].outcome).toBe('protocol_violation');
    expect(blocked.runs[0].error).toMatch(/nested deeper than 64 levels/);
    const res = await api(
      gw.url,
      'POST',
      '/tasks',
      `{"title":"x","body":${'['.repeat(100)}${']'.repeat(100)}}`,
    );
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/nested deeper than 64 levels/);
  });

  it('refuses an old run’s token on every worker route once the task has a newer run', async () => {
    const gw = await startGateway();
    const { board } = gw.kanban;
    const task = await board.create({ title: 'twice' }, { kind: 'api' });
    const auth = (token: string) => ({ authorization: `Bearer ${token}` });
    const old = (await claim(board, gw.dataDir, task.id)).token;
    const first = await api(gw.url, 'POST', `/tasks/${task.id}/block`, { reason: 'r' }, auth(old));
    expect(first.status).toBe(200);
    // Repeating the same verdict while it is still the latest run is idempotent.
    const again = await api(gw.url, 'POST', `/tasks/${task.id}/block`, { reason: 'r' }, auth(old));
    expect(again.status).toBe(200);
    expect((await api(gw.url, 'POST', `/tasks/${task.id}/unblock`)).status).toBe(200);
    await claim(board, gw.dataDir, task.id);
    for (const [route, body] of [
      ['block', { reason: 'r' }],
      ['complete', {}],
      ['heartbeat', {}],
    ] as const) {
      const res = await api(gw.url, 'POST', `/tasks/${task.id}/${route}`, body, auth(old));
      expect(res.status, route).toBe(409);
      expect(res.body.error.code).toBe('RUN_MISMATCH');
    }
    expect((await board.get(task.id)).status).toBe('running');
  });
});
