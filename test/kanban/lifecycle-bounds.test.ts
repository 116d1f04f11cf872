// Nothing waits forever and nothing grows forever: children of archived or deleted parents,
// retention of run folders and events, heartbeat coalescing, /tasks on a large board.
import { wallClock } from '../../src/clock.js';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, startGateway } from '../helpers/app.js';
import { recordGone } from '../../src/kanban/moves/records.js';
import { claim, testHostId } from '../helpers/board.js';
import { telegramDouble } from '../helpers/doubles.js';
import { waitFor } from '../helpers/wait.js';
import { createTask, eventsOf, getTask, profile } from '../helpers/workers.js';

const DAY = 24 * 3600 * 1000;

describe('children of a parent that will never be done', () => {
  it('are blocked when their only parent is archived, and run once unblocked', async () => {
    const gw = await startGateway();
    const parent = await createTask(gw, { title: 'parent' });
    const child = await createTask(gw, { title: 'child', parents: [parent.id] });
    expect((await getTask(gw, child.id)).status).toBe('todo');
    expect((await api(gw.url, 'POST', `/tasks/${parent.id}/archive`)).status).toBe(200);
    const blocked = await getTask(gw, child.id);
    expect(blocked).toMatchObject({
      status: 'blocked',
      blockReason: `parent ${parent.id} archived`,
    });
    expect((await eventsOf(gw, child.id)).map((e) => e.kind)).toContain('blocked');
    const unblocked = await api(gw.url, 'POST', `/tasks/${child.id}/unblock`);
    expect(unblocked.body).toMatchObject({ status: 'ready', parents: [] });
  });

  it('with several parents: one archived blocks it; unblocked it waits in todo for the others', async () => {
    const gw = await startGateway();
    const a = await createTask(gw, { title: 'a' });
    const b = await createTask(gw, { title: 'b' });
    const child = await createTask(gw, { title: 'child', parents: [a.id, b.id] });
    await api(gw.url, 'POST', `/tasks/${a.id}/archive`);
    expect((await getTask(gw, child.id)).status).toBe('blocked');
    expect((await api(gw.url, 'POST', `/tasks/${child.id}/unblock`)).body).toMatchObject({
      status: 'todo',
      parents: [b.id],
    });
    // b completes: the child is promoted.
    const run = await claim(gw.kanban.board, gw.dataDir, b.id);
    await gw.kanban.worker.complete(b.id, run.token, {});
    expect((await getTask(gw, child.id)).status).toBe('ready');
  });

  it('are promoted when the parent they still waited on is deleted and every remaining parent is done', async () => {
    const gw = await startGateway();
    const done = await createTask(gw, { title: 'done one' });
    const run = await claim(gw.kanban.board, gw.dataDir, done.id);
    await gw.kanban.worker.complete(done.id, run.token, {});
    const pending = await createTask(gw, { title: 'pending one' });
    const child = await createTask(gw, { title: 'child', parents: [done.id, pending.id] });
    // Archiving the done parent changes nothing for the child; its pending parent is archived
    // (child blocked), unblocked, then deleted: only the done parent remains.
    await api(gw.url, 'POST', `/tasks/${done.id}/archive`);
    expect((await getTask(gw, child.id)).status).toBe('todo');
    await api(gw.url, 'POST', `/tasks/${pending.id}/archive`);
    expect((await getTask(gw, child.id)).status).toBe('blocked');
    expect((await api(gw.url, 'POST', `/tasks/${child.id}/unblock`)).body.status).toBe('ready');
    expect((await api(gw.url, 'DELETE', `/tasks/${pending.id}`)).status).toBe(204);
    expect((await getTask(gw, child.id)).status).toBe('ready');
  });
});

describe('retention', () => {
  it('removes old run folders and events in batches, and a deleted task’s folders at once', async () => {
    let now = Date.now();
    const gw = await startGateway(
      { retention: { runDays: 30, eventDays: 7 } },
      { clock: wallClock(() => now) },
    );
    const { board } = gw.kanban;
    // The test claims as this daemon would: on a shared board, only its own runs' folders are
    // on its disk for retention to remove.
    gw.kanban.ownership.hostId = await testHostId(board);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const task = await board.create({ title: `old ${i}` }, { kind: 'api' });
      const run = await claim(board, gw.dataDir, task.id);
      await gw.kanban.worker.complete(task.id, run.token, {});
      await board.transact((tx) => recordGone(tx, run.run.id));
      ids.push(run.run.id);
    }
    // Their folders (made by the claim, as a spawn makes them) get a log; then time passes.
    for (const id of ids) writeFileSync(join(gw.dataDir, 'runs', id, 'log'), 'output\n');
    const events = await board.events.lastId();
    now += 8 * DAY;
    expect(await gw.retention.pass()).toMatchObject({ run_folders: 0, events });
    now += 23 * DAY;
    expect(await gw.retention.pass()).toMatchObject({ run_folders: 3 });
    for (const id of ids) expect(existsSync(join(gw.dataDir, 'runs', id))).toBe(false);
    const log = await api(gw.url, 'GET', `/runs/${ids[0]}/log`);
    expect(log.status).toBe(404);
    expect(log.body.error.message).toMatch(/removed by retention/);
    const metrics = (await api(gw.url, 'GET', '/metrics')).body as string;
    expect(metrics).toMatch(/gatehouse_pruned_total\{what="run_folders"\} 3/);

    const gone = await board.create({ title: 'to delete' }, { kind: 'api' });
    const run = await claim(board, gw.dataDir, gone.id);
    mkdirSync(join(gw.dataDir, 'runs', run.run.id), { recursive: true });
    await gw.kanban.worker.complete(gone.id, run.token, {});
    await api(gw.url, 'POST', `/tasks/${gone.id}/archive`);
    expect((await api(gw.url, 'DELETE', `/tasks/${gone.id}`)).status).toBe(204);
    expect(existsSync(join(gw.dataDir, 'runs', run.run.id))).toBe(false);
  });
});

describe('deleting a task', () => {
  it('answers 204 once the task is gone even if its folder cannot go yet; retention removes it later', async () => {
    const gw = await startGateway();
    const { board } = gw.kanban;
    const task = await board.create({ title: 'to delete' }, { kind: 'api' });
    const run = await claim(board, gw.dataDir, task.id);
    const folder = join(gw.dataDir, 'runs', run.run.id);
    mkdirSync(folder, { recursive: true });
    await gw.kanban.worker.complete(task.id, run.token, {});
    await api(gw.url, 'POST', `/tasks/${task.id}/archive`);
    // Another task's folder stays; one whose run a dying daemon deleted without its folder goes.
    const kept = await board.create({ title: 'kept' }, { kind: 'api' });
    const keptRun = await claim(board, gw.dataDir, kept.id);
    mkdirSync(join(gw.dataDir, 'runs', keptRun.run.id), { recursive: true });
    const orphan = join(gw.dataDir, 'runs', 'r_00000000abcd');
    mkdirSync(orphan, { recursive: true });
    writeFileSync(join(orphan, 'log'), 'left behind\n');
    // A mount point cannot be removed (EBUSY), even by root.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16k', 'tmpfs', folder]);
    try {
      expect((await api(gw.url, 'DELETE', `/tasks/${task.id}`)).status).toBe(204);
      expect((await api(gw.url, 'GET', `/tasks/${task.id}`)).status).toBe(404);
      expect(existsSync(folder)).toBe(true);
    } finally {
      execFileSync('umount', [folder]);
    }
    expect(await gw.retention.sweepOrphans()).toBe(2);
    expect(existsSync(folder)).toBe(false);
    expect(existsSync(orphan)).toBe(false);
    expect(existsSync(join(gw.dataDir, 'runs', keptRun.run.id))).toBe(true);
  });
});

describe('bounded output', () => {
  it('coalesces a worker’s heartbeats into at most one event per 30 s, while each refreshes its lease', async () => {
    const gw = await startGateway(
      { workers: { tickSeconds: 0.1, profiles: { beats: profile('heartbeat-always') } } },
      { dispatch: true },
    );
    const task = await createTask(gw, { title: 'chatty', assignee: 'beats' });
    const beats = async () =>
      (await gw.kanban.board.tasks.running()).find((t) => t.id === task.id)?.lastHeartbeatAt;
    const first = await waitFor('a heartbeat', beats);
    await waitFor('many more heartbeats', async () => ((await beats()) ?? 0) > first + 1000);
    const kinds = (await eventsOf(gw, task.id)).map((e) => e.kind);
    expect(kinds.filter((k) => k === 'heartbeat')).toHaveLength(1);
  });

  it('answers /tasks in chat from the open tasks however large the board, with a count of the rest', async () => {
    const tg = await telegramDouble();
    const gw = await startGateway({
      workers: { maxConcurrent: 0 },
      platforms: [
        {
          name: 'tg',
          type: 'telegram',
          options: { token: tg.token, apiBase: tg.url, pollTimeoutSeconds: 1 },
        },
      ],
    });
    const { board } = gw.kanban;
    for (let i = 0; i < 1100; i++) {
      const t = await board.create({ title: `closed ${i}` }, { kind: 'api' });
      await api(gw.url, 'POST', `/tasks/${t.id}/archive`);
    }
    for (let i = 0; i < 25; i++) await board.create({ title: `open ${i}` }, { kind: 'api' });
    await waitFor('connected', () => gw.platforms.get('tg').view().state === 'connected');
    tg.say(5, '/tasks');
    const reply = await waitFor('the reply', () => tg.sent.find((m) => m.text.includes('open 0')));
    expect(reply.text.split('\n')).toHaveLength(21);
    expect(reply.text).toMatch(/…and 5 more$/);
  });
});
