// Each move on a real temp database with a fixed clock: what it writes, what it emits, and
// what the CHECK constraints refuse. No gateway, no processes.
import { wallClock } from '../../src/clock.js';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Board } from '../../src/kanban/board.js';
import { EventBus } from '../../src/kanban/event-bus.js';
import type { BoardEvent } from '../../src/kanban/model/events.js';
import { archiveIdle } from '../../src/kanban/moves/archive.js';
import { claimTask } from '../../src/kanban/moves/claim.js';
import { declareDead } from '../../src/kanban/moves/hosts.js';
import { createTask } from '../../src/kanban/moves/create-task.js';
import { giveUpReady } from '../../src/kanban/moves/give-up.js';
import { extendLease, heartbeat } from '../../src/kanban/moves/lease.js';
import { settleRun } from '../../src/kanban/moves/settle.js';
import { beginTermination, deferTermination } from '../../src/kanban/moves/termination.js';
import { Terminations } from '../../src/kanban/dispatch/terminations.js';
import { Transactor } from '../../src/kanban/moves/tx.js';
import { unblockTask } from '../../src/kanban/moves/unblock.js';
import { openDatabase } from '../../src/kanban/store/sqlite/db.js';
import { openStore } from '../../src/kanban/store/sqlite/store.js';
import { WRITES } from '../../src/kanban/store/records/task-writes.js';
import type { BoardStore, TxTables } from '../../src/kanban/store/contract.js';
import { ENGINE, holdBoard, openTestStore, rawQuery } from '../helpers/store.js';
import { testHostId } from '../helpers/board.js';
import { waitFor } from '../helpers/wait.js';
import { tempDir } from '../helpers/daemon.js';

const NOW = 1_700_000_000_000;
const policy = { failureLimit: 2, rateLimitCooldownMs: 300_000 };
const stores: BoardStore[] = [];

afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

async function fixture() {
  const dataDir = tempDir();
  const store = await openTestStore(dataDir);
  stores.push(store);
  const board = new Board(
    store,
    wallClock(() => NOW),
    (err) => {
      throw err;
    },
  );
  const events: BoardEvent[] = [];
  board.bus.subscribe((e) => events.push(e));
  const hostId = await testHostId(board);
  const claim = async (taskId: string) =>
    (await board.transact((tx) =>
      claimTask(tx, {
        taskId,
        profile: 'demo',
        host: 'test-host',
        hostId,
        leaseMs: 60_000,
        keepDescendants: false,
        logPathFor: (id) => `/tmp/${id}.log`,
      }),
    ))!;
  const kinds = () => events.map((e) => e.kind);
  return { dataDir, store, board, events, kinds, claim };
}

/** A new task under an id the board already has: refused by the key. */
function again(id: string): Parameters<TxTables[typeof WRITES]['create']> {
  const task = {
    id,
    title: 'again',
    body: '',
    assignee: null,
    priority: 0,
    maxRuntimeSeconds: null,
    maxRetries: null,
    repo: null,
    model: null,
    review: null,
    approval: null,
    budget: null,
    origin: { kind: 'api' as const },
    at: NOW,
  };
  return [task, 'ready', []];
}

/** The columns a status implies, as stored. */
async function row(dataDir: string, id: string) {
  const [found] = await rawQuery(
    dataDir,
    'SELECT status, current_run_id, lease_expires_at, last_heartbeat_at, terminating, not_before, block_reason FROM tasks WHERE id = ?',
    [id],
  );
  return found;
}

describe('moves', () => {
  it('commits nothing of a move whose events cannot be written: its task is not created', async () => {
    const f = await fixture();
    let id = '';
    await expect(
      f.board.transact(async (tx) => {
        const task = await createTask(tx, { title: 'never' }, { kind: 'api' });
        id = task.id;
        // A payload that cannot be serialised: the events, the transaction's last statement,
        // are never sent, and the commit that would go behind them must not go either.
        tx.emit({ taskId: task.id, runId: null, kind: 'created', payload: { n: 1n } as never });
        return task;
      }),
    ).rejects.toThrow();
    expect(id).not.toBe('');
    expect(await f.board.tasks.get(id)).toBeNull();
    expect(await rawQuery(f.dataDir, 'SELECT id FROM tasks WHERE id = ?', [id])).toEqual([]);
  });

  it('create: the task it answers is the task the board then reads, odd text included', async () => {
    const f = await fixture();
    const parent = await f.board.create({ title: 'parent' }, { kind: 'api' });
    const inputs = [
      { title: 'plain' },
      {
        // U+0000 (PostgreSQL's text cannot hold it), a lone surrogate (UTF-8 cannot), an emoji.
        title: 'nul \0 lone \uD800 pair 😀 end',
        body: 'body \0 \uDC00 ünïcode\nline',
        assignee: 'ann\0e',
        priority: -3,
        parents: [parent.id, parent.id],
        maxRuntimeSeconds: 90,
        maxRetries: 0,
        repo: 'app',
        model: 'opus \uD83D',
        review: true,
      },
      { title: 'no review', review: false, assignee: null, repo: null, model: null },
    ];
    const origin = { kind: 'api', note: 'nul \0 lone \uD800' } as never;
    // Together, in one group commit, and alone.
    const together = await Promise.all(inputs.map((input) => f.board.create(input, origin)));
    const alone = [];
    for (const input of inputs) alone.push(await f.board.create(input, origin));
    for (const answered of [...together, ...alone]) {
      expect(await f.board.tasks.get(answered.id)).toEqual(answered);
      expect((await f.board.tasks.detail(answered.id))?.task).toEqual(answered);
    }
    expect(together[1]).toMatchObject({ status: 'todo', parents: [parent.id], review: true });
    expect(together[2]).toMatchObject({ status: 'ready', parents: [], review: false });
  });

  it('a write refused after its move returned (its answer not waited for) refuses the move, and nothing of it is committed', async () => {
    const f = await fixture();
    const first = await f.board.create({ title: 'first' }, { kind: 'api' });
    const claim = await f.claim(first.id);
    let other = '';
    await expect(
      f.board.transact(async (tx) => {
        other = (await createTask(tx, { title: 'other' }, { kind: 'api' })).id;
        await tx.store.runs.recordProcess(claim.run.id, {
          pid: 77,
          pgid: 77,
          startTime: 1,
          bootId: 'b',
        });
        // The same id again: refused by the key, on PostgreSQL only when the answer comes.
        await tx.store[WRITES].create(...again(first.id));
      }),
    ).rejects.toThrow(/unique|duplicate key/i);
    expect(other).not.toBe('');
    expect(await f.board.tasks.get(other)).toBeNull();
    expect((await f.board.runs.get(claim.run.id))?.pid).toBeNull();
    expect(f.kinds()).toEqual(['created', 'claimed']);
    // The board takes the next move as before.
    expect((await f.board.create({ title: 'next' }, { kind: 'api' })).title).toBe('next');
  });

  it('claim: ready → running with a run, a lease and a claimed event', async () => {
    const f = await fixture();
    const task = await f.board.create({ title: 'a' }, { kind: 'api' });
    const claim = await f.claim(task.id);
    expect(await row(f.dataDir, task.id)).toEqual({
      status: 'running',
      current_run_id: claim.run.id,
      lease_expires_at: NOW + 60_000,
      last_heartbeat_at: null,
      terminating: null,
      not_before: null,
      block_reason: null,
    });
    expect(f.kinds()).toEqual(['created', 'claimed']);
    expect(await f.claim(task.id)).toBeNull();
  });

  it('detail: the task, its runs as the run table reads them, and the tasks waiting on it', async () => {
    const f = await fixture();
    const task = await f.board.create({ title: 'a' }, { kind: 'api' });
    const child = await f.board.create({ title: 'c', parents: [task.id] }, { kind: 'api' });
    const first = await f.claim(task.id);
    await f.board.transact(async (tx) => {
      await tx.store.runs.recordProcess(first.run.id, {
        pid: 4242,
        pgid: 4242,
        startTime: 987_654,
        bootId: 'b0a7-1d',
      });
      await tx.store.runs.recordSample(first.run.id, 12.5, 3 * 2 ** 30);
    });
    await f.board.transact((tx) =>
      settleRun(tx, policy, {
        taskId: task.id,
        runId: first.run.id,
        outcome: 'interrupted',
        exitCode: 3,
        signal: 'SIGSEGV',
        error: 'ended "badly" — ünïcode\nand a new line',
        summary: null,
        procGone: true,
        // Stored as JSON text: read back as text, then parsed, not as nested JSON.
        workspace: {
          headBefore: 'a1',
          headAfter: 'b2',
          dirty: true,
          filesChanged: 2,
          insertions: 10,
          deletions: 1,
        },
        agent: {
          kind: 'claude',
          model: null,
          sessionId: 's-1',
          resumed: null,
          resumeFailed: false,
          usage: null,
        },
      }),
    );
    const hostId = await testHostId(f.board);
    const second = (await f.board.transact((tx) =>
      claimTask(tx, {
        taskId: task.id,
        profile: 'demo',
        host: 'test-host',
        hostId,
        leaseMs: 60_000,
        keepDescendants: true,
        logPathFor: (id) => `/tmp/${id}.log`,
      }),
    ))!;
    const detail = await f.board.detail(task.id);
    // Each value as it is stored: a real peak stays a real, text stays text, null stays null.
    expect(detail.runs).toEqual(await f.store.runs.forTask(task.id));
    expect(detail.runs.map((r) => r.id)).toEqual([first.run.id, second.run.id]);
    expect(detail.runs[0]).toMatchObject({
      pid: 4242,
      cpuPercentMax: 12.5,
      rssBytesMax: 3 * 2 ** 30,
      outcome: 'interrupted',
      exitCode: 3,
      signal: 'SIGSEGV',
      error: 'ended "badly" — ünïcode\nand a new line',
      workspace: { headAfter: 'b2', filesChanged: 2 },
      agent: { kind: 'claude', sessionId: 's-1' },
      keepDescendants: false,
    });
    expect(detail.runs[1]).toMatchObject({ keepDescendants: true, workspace: null, agent: null });
    expect(detail.task).toEqual(await f.board.get(task.id));
    expect(detail.children).toEqual([child.id]);
    const alone = await f.board.detail(child.id);
    expect(alone).toMatchObject({ runs: [], children: [] });
  });

  it('claim: refused while a parent is not done', async () => {
    const f = await fixture();
    const parent = await f.board.create({ title: 'p' }, { kind: 'api' });
    const child = await f.board.create({ title: 'c', parents: [parent.id] }, { kind: 'api' });
    expect(child.status).toBe('todo');
    expect(await f.claim(child.id)).toBeNull();
  });

  it('claim: refused to a host whose lease has run out, even before it is declared dead', async () => {
    const f = await fixture();
    const task = await f.board.create({ title: 'a' }, { kind: 'api' });
    const lapsed = await f.board.transact((tx) =>
      tx.store.hosts.register({
        name: 'frozen',
        capacity: 1,
        profiles: ['demo'],
        version: 'test',
        leaseMs: 1,
      }),
    );
    await waitFor('its lease to run out', async () => (await f.board.hosts.expired(0)).length > 0);
    const claimed = await f.board.transact((tx) =>
      claimTask(tx, {
        taskId: task.id,
        profile: 'demo',
        host: 'frozen',
        hostId: lapsed.id,
        leaseMs: 60_000,
        keepDescendants: false,
        logPathFor: (id) => `/tmp/${id}.log`,
      }),
    );
    expect(claimed).toBeNull();
    expect((await f.board.get(task.id)).status).toBe('ready');
  });

  it('declaring a host dead: its open run is lost (counted), its ended runs no longer hold their task', async () => {
    const f = await fixture();
    const open = await f.board.create({ title: 'open' }, { kind: 'api' });
    const ended = await f.board.create({ title: 'ended' }, { kind: 'api' });
    const openClaim = await f.claim(open.id);
    const endedClaim = await f.claim(ended.id);
    // The second run's verdict came, and its processes were never seen gone by its host.
    await f.board.transact((tx) =>
      tx.store.runs.recordProcess(endedClaim.run.id, {
        pid: 99_999,
        pgid: 99_999,
        startTime: 1,
        bootId: 'another-machine',
      }),
    );
    await f.board.transact((tx) =>
      settleRun(tx, policy, { taskId: ended.id, runId: endedClaim.run.id, outcome: 'blocked' }),
    );
    expect(await f.board.runs.hasLingering(ended.id)).toBe(true);
    const [host] = await f.board.hosts.list();
    const taken = await f.board.transact((tx) => declareDead(tx, policy, host!));
    expect(taken?.lost).toBe(1);
    expect((await f.board.runs.get(openClaim.run.id))?.outcome).toBe('lost');
    expect(await f.board.get(open.id)).toMatchObject({ status: 'ready', consecutiveFailures: 1 });
    expect(await f.board.runs.hasLingering(ended.id)).toBe(false);
    expect(f.kinds().slice(-2)).toEqual(['lost', 'host_dead']);
    // Declared once: the second declaration (another host, later) changes nothing.
    expect(await f.board.transact((tx) => declareDead(tx, policy, host!))).toBeNull();
  });

  it('declaring a host dead: a termination it had begun ends the run its way (an archive stays an archive)', async () => {
    const f = await fixture();
    const task = await f.board.create({ title: 'archived on a host that died' }, { kind: 'api' });
    const claimed = await f.claim(task.id);
    expect(
      await f.board.transact((tx) => beginTermination(tx, task.id, 'archive', true)),
    ).not.toBeNull();
    const [host] = await f.board.hosts.list();
    const taken = await f.board.transact((tx) => declareDead(tx, policy, host!));
    expect(taken?.lost).toBe(0);
    expect((await f.board.runs.get(claimed.run.id))?.outcome).toBe('archived');
    expect(await f.board.get(task.id)).toMatchObject({
      status: 'archived',
      consecutiveFailures: 0,
    });
    expect(f.kinds()).not.toContain('lost');
  });

  const settles: [
    string,
    Parameters<typeof settleRun>[2]['outcome'],
    object,
    Record<string, unknown>,
  ][] = [
    ['completed → done, counter reset', 'completed', {}, { status: 'done', block_reason: null }],
    [
      'blocked → blocked with the reason',
      'blocked',
      { blockReason: 'needs a key' },
      { status: 'blocked', block_reason: 'needs a key' },
    ],
    [
      'crashed → ready below the limit',
      'crashed',
      { exitCode: 1, error: 'boom' },
      { status: 'ready', not_before: null },
    ],
    [
      'rate_limited → ready with a cooldown',
      'rate_limited',
      { exitCode: 75 },
      { status: 'ready', not_before: NOW + 300_000 },
    ],
    [
      'protocol_violation → blocked at once',
      'protocol_violation',
      { exitCode: 0 },
      { status: 'blocked' },
    ],
    ['interrupted → ready, not counted', 'interrupted', {}, { status: 'ready', not_before: null }],
  ];

  for (const [name, outcome, fields, expected] of settles) {
    it(`settle: ${name}, clearing the run and the lease`, async () => {
      const f = await fixture();
      const task = await f.board.create({ title: 't' }, { kind: 'api' });
      const claim = await f.claim(task.id);
      const settled = await f.board.transact((tx) =>
        settleRun(tx, policy, { taskId: task.id, runId: claim.run.id, outcome, ...fields }),
      );
      expect(settled).not.toBeNull();
      expect(await row(f.dataDir, task.id)).toMatchObject({
        current_run_id: null,
        lease_expires_at: null,
        last_heartbeat_at: null,
        terminating: null,
        ...expected,
      });
      expect(f.kinds()).toContain(outcome);
      expect(await f.store.runs.get(claim.run.id)).toMatchObject({ outcome, endedAt: NOW });
    });
  }

  it('settle: a second settlement of the same run changes nothing', async () => {
    const f = await fixture();
    const task = await f.board.create({ title: 't' }, { kind: 'api' });
    const claim = await f.claim(task.id);
    const end = { taskId: task.id, runId: claim.run.id, outcome: 'completed' as const };
    expect(await f.board.transact((tx) => settleRun(tx, policy, end))).not.toBeNull();
    const events = f.events.length;
    expect(await f.board.transact((tx) => settleRun(tx, policy, end))).toBeNull();
    expect(f.events).toHaveLength(events);
  });

  it('settle: completion promotes a child whose parents are now all done', async () => {
    const f = await fixture();
    const parent = await f.board.create({ title: 'p' }, { kind: 'api' });
    const child = await f.board.create({ title: 'c', parents: [parent.id] }, { kind: 'api' });
    const claim = await f.claim(parent.id);
    await f.board.transact((tx) =>
      settleRun(tx, policy, { taskId: parent.id, runId: claim.run.id, outcome: 'completed' }),
    );
    expect((await f.board.get(child.id)).status).toBe('ready');
    expect(f.kinds().at(-1)).toBe('promoted');
  });

  it('give up: ready → blocked with the reason and a gave_up event', async () => {
    const f = await fixture();
    const task = await f.board.create({ title: 't' }, { kind: 'api' });
    expect(await f.board.transact((tx) => giveUpReady(tx, task.id, 'no profile'))).toBe(true);
    expect(await row(f.dataDir, task.id)).toMatchObject({
      status: 'blocked',
      block_reason: 'no profile',
    });
    expect(f.kinds().at(-1)).toBe('gave_up');
  });

  it('unblock: blocked → ready, the reason and the failure count cleared', async () => {
    const f = await fixture();
    const task = await f.board.create({ title: 't' }, { kind: 'api' });
    await f.board.transact((tx) => giveUpReady(tx, task.id, 'stuck'));
    const unblocked = await f.board.transact((tx) => unblockTask(tx, task.id));
    expect(unblocked).toMatchObject({ status: 'ready', blockReason: null, consecutiveFailures: 0 });
    await expect(f.board.transact((tx) => unblockTask(tx, task.id))).rejects.toThrow(/not blocked/);
  });

  it('archive: an idle task is archived; a running one is refused (its worker goes first)', async () => {
    const f = await fixture();
    const idle = await f.board.create({ title: 'idle' }, { kind: 'api' });
    expect((await f.board.transact((tx) => archiveIdle(tx, idle.id))).status).toBe('archived');
    const busy = await f.board.create({ title: 'busy' }, { kind: 'api' });
    await f.claim(busy.id);
    await expect(f.board.transact((tx) => archiveIdle(tx, busy.id))).rejects.toThrow(/running/);
  });

  it('termination: a deferral is announced once committed, even when its move had to run again', async () => {
    const f = await fixture();
    const task = await f.board.create({ title: 't' }, { kind: 'api' });
    await f.claim(task.id);
    const run = await f.board.transact((tx) => beginTermination(tx, task.id, 'reclaim', true));
    const other = await f.board.create({ title: 'other' }, { kind: 'api' });
    let failing: Promise<unknown> | null = null;
    // What the process table would say of a worker that survived SIGKILL. The terminator ends
    // in the turn that queues the deferral, beside a move whose events cannot be written: the
    // group fails as a whole and each move runs again alone.
    const survived = async () => {
      failing = f.board.transact(async (tx) => {
        tx.emit({ taskId: other.id, runId: null, kind: 'created', payload: { n: 1n } as never });
      });
      failing.catch(() => undefined);
      return { terminated: false, sigkill: true, survived: true, ended: [], survivors: [4242] };
    };
    const terminations = new Terminations(
      f.board,
      { ...policy, reclaimDeferMs: 120_000 },
      survived,
      f.dataDir,
    );
    const outcome = await terminations.finish(run!, 'reclaim');
    expect(outcome.deferred).toBe(true);
    await expect(failing).rejects.toThrow(/BigInt/);
    expect(f.kinds().filter((k) => k === 'reclaim_deferred')).toHaveLength(1);
    // The next tick's try does not announce it again.
    await terminations.finish(run!, 'reclaim');
    expect(f.kinds().filter((k) => k === 'reclaim_deferred')).toHaveLength(1);
  });

  it('termination: begin claims the right once; defer keeps the claim and extends the lease', async () => {
    const f = await fixture();
    const task = await f.board.create({ title: 't' }, { kind: 'api' });
    const claim = await f.claim(task.id);
    const run = await f.board.transact((tx) => beginTermination(tx, task.id, 'reclaim', true));
    expect(run?.id).toBe(claim.run.id);
    expect(
      await f.board.transact((tx) => beginTermination(tx, task.id, 'timeout', true)),
    ).toBeNull();
    const report = { prevPid: 1, terminated: false, sigkill: true, survived: true, pids: [1] };
    await f.board.transact((tx) => deferTermination(tx, run!, 'reclaim', report, 120_000, true));
    expect(await row(f.dataDir, task.id)).toMatchObject({
      status: 'running',
      terminating: 'reclaim',
      lease_expires_at: NOW + 120_000,
    });
    expect(f.kinds().at(-1)).toBe('reclaim_deferred');
    // An operator's archive takes over a pending reclaim that nobody is carrying out.
    expect(
      (await f.board.transact((tx) => beginTermination(tx, task.id, 'archive', true)))?.id,
    ).toBe(claim.run.id);
  });

  it('lease: extended only while no termination is pending; heartbeats coalesce their events', async () => {
    const f = await fixture();
    const task = await f.board.create({ title: 't' }, { kind: 'api' });
    const claim = await f.claim(task.id);
    expect(await f.board.transact((tx) => extendLease(tx, task.id, claim.run.id, NOW + 1))).toBe(
      true,
    );
    for (let i = 0; i < 5; i++)
      expect(
        await f.board.transact((tx) => heartbeat(tx, task.id, claim.run.id, 'tick', 30_000)),
      ).toBe(true);
    expect(f.kinds().filter((k) => k === 'heartbeat')).toHaveLength(1);
    expect(await row(f.dataDir, task.id)).toMatchObject({ last_heartbeat_at: NOW });
    await f.board.transact((tx) => beginTermination(tx, task.id, 'stale', true));
    expect(await f.board.transact((tx) => extendLease(tx, task.id, claim.run.id, NOW + 2))).toBe(
      false,
    );
  });
});

/** A Transactor of its own over a fresh database, and the events its bus published. */
async function groupFixture() {
  const dataDir = tempDir();
  const store = await openTestStore(dataDir);
  stores.push(store);
  const bus = new EventBus((err) => {
    throw err;
  });
  const published: BoardEvent[] = [];
  bus.subscribe((e) => published.push(e));
  const transactor = new Transactor(
    store,
    wallClock(() => NOW),
    bus,
  );
  const create = (title: string, body = '') =>
    transactor.run((tx) => createTask(tx, { title, body }, { kind: 'api' }));
  const titles = async () =>
    (await rawQuery(dataDir, 'SELECT title FROM tasks ORDER BY seq')).map((r) => r.title);
  const eventCount = async () =>
    Number((await rawQuery(dataDir, 'SELECT count(*) AS n FROM events'))[0]!.n);
  // The connection the transactor writes through (a page limit is a connection's own).
  const writer = (store as unknown as { writer: Database.Database }).writer;
  return { dataDir, store, writer, transactor, published, create, titles, eventCount };
}

describe('group commit', () => {
  it('commits the moves of one turn together; one that throws midway is undone alone', async () => {
    const g = await groupFixture();
    // Queued in one turn of the event loop: one group.
    const moves = [
      g.create('first'),
      g.transactor.run(async (tx) => {
        await createTask(tx, { title: 'half done' }, { kind: 'api' });
        throw new Error('failed after writing');
      }),
      g.create('last'),
    ];
    const outcomes = await Promise.allSettled(moves);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe('failed after writing');
    expect(await g.titles()).toEqual(['first', 'last']);
    // Events reach listeners once committed, and none of the undone move's was kept.
    expect(g.published.map((e) => e.kind)).toEqual(['created', 'created']);
    expect(await g.eventCount()).toBe(2);
  });

  it('refuses only the move at fault when its failure shows at the group’s end, not in its move', async () => {
    const g = await groupFixture();
    const taken = await g.create('taken');
    // Queued in one turn: one group. Each bad move's failure comes after it returned: its
    // events cannot be written (the group's last statement), or (on PostgreSQL) its INSERT,
    // sent without waiting, is refused when the answer comes.
    const moves = [
      g.create('first'),
      g.transactor.run(async (tx) => {
        await createTask(tx, { title: 'bad events' }, { kind: 'api' });
        tx.emit({ taskId: taken.id, runId: null, kind: 'created', payload: { n: 1n } as never });
      }),
      g.create('middle'),
      g.transactor.run(async (tx) => {
        await createTask(tx, { title: 'beside a taken id' }, { kind: 'api' });
        await tx.store[WRITES].create(...again(taken.id));
      }),
      g.create('last'),
    ];
    const outcomes = await Promise.allSettled(moves);
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/BigInt/);
    expect(String((outcomes[3] as PromiseRejectedResult).reason)).toMatch(/unique|duplicate key/i);
    expect(await g.titles()).toEqual(['taken', 'first', 'middle', 'last']);
    expect(g.published.map((e) => e.kind)).toEqual(['created', 'created', 'created', 'created']);
    expect(await g.eventCount()).toBe(4);
    // In the order they were asked, then the next moves as before.
    await g.create('next');
    expect((await g.titles()).at(-1)).toBe('next');
  });

  it('refuses a group under a lock held elsewhere as one, within the busy window, not a move at a time', async () => {
    const g = await groupFixture();
    // As the daemon serves: SQLite's writer does not wait for a lock itself (the Transactor
    // retries), PostgreSQL's waits up to lock_timeout.
    g.store.serving();
    const release = await holdBoard(g.dataDir, 'tasks');
    try {
      const t0 = Date.now();
      const outcomes = await Promise.allSettled(['a', 'b', 'c', 'd'].map((t) => g.create(t)));
      const took = Date.now() - t0;
      expect(outcomes.map((o) => o.status)).toEqual([
        'rejected',
        'rejected',
        'rejected',
        'rejected',
      ]);
      for (const o of outcomes)
        expect((o as PromiseRejectedResult).reason).toMatchObject({ code: 'STORAGE_BUSY' });
      // One wait for the lock (PostgreSQL's lock_timeout, 2 s; SQLite's retries, 2 s), not one
      // per move: four moves tried alone after it would have waited about 10 s on PostgreSQL.
      expect(took).toBeLessThan(ENGINE === 'postgres' ? 6_000 : 4_000);
    } finally {
      await release();
    }
    await g.create('after');
    expect(await g.titles()).toEqual(['after']);
  });

  it('undoes a move alone in its group that throws after writing, and answers with its own error', async () => {
    const g = await groupFixture();
    const lone = g.transactor.run(async (tx) => {
      await createTask(tx, { title: 'half done' }, { kind: 'api' });
      throw new Error('failed after writing');
    });
    await expect(lone).rejects.toThrow('failed after writing');
    expect(await g.titles()).toEqual([]);
    expect(await g.eventCount()).toBe(0);
    expect(g.published).toEqual([]);
    // The transactor goes on: the next move commits.
    await g.create('next');
    expect(await g.titles()).toEqual(['next']);
  });

  // A group's events are written at its end, outside any move's savepoint: a full disk there
  // (or SQLite rolling the whole transaction back by itself) refuses every move of the group.
  // On PostgreSQL the like is a lost connection (the daemon tests cut it).
  it.runIf(ENGINE === 'sqlite')(
    'refuses the whole group when a full disk stops its commit',
    async () => {
      const g = await groupFixture();
      // Room for a small task or two, not for a 1 MB event.
      const pages = g.writer.pragma('page_count', { simple: true }) as number;
      g.writer.pragma(`max_page_count = ${pages + 8}`);
      const outcomes = await Promise.allSettled([
        g.create('first'),
        g.transactor.run(async (tx) => {
          const task = await createTask(tx, { title: 'with a long note' }, { kind: 'api' });
          tx.emit({
            taskId: task.id,
            runId: null,
            kind: 'commented',
            payload: { commentId: 1, author: 'op', text: 'x'.repeat(1024 * 1024) },
          });
        }),
        g.create('after it'),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
      for (const o of outcomes)
        expect((o as PromiseRejectedResult).reason.code).toBe('STORAGE_UNAVAILABLE');
      expect(await g.titles()).toEqual([]);
      expect(await g.eventCount()).toBe(0);
      expect(g.published).toEqual([]);
    },
  );
});

describe('the status CHECK constraints', () => {
  it('refuse a forged row: a done task that keeps its run and lease', async () => {
    const f = await fixture();
    const task = await f.board.create({ title: 't' }, { kind: 'api' });
    await f.claim(task.id);
    const refused = /CHECK constraint failed|violates check constraint/;
    await expect(
      rawQuery(f.dataDir, "UPDATE tasks SET status = 'done' WHERE id = ?", [task.id]),
    ).rejects.toThrow(refused);
    await expect(
      rawQuery(f.dataDir, 'UPDATE tasks SET not_before = 5 WHERE id = ?', [task.id]),
    ).rejects.toThrow(refused);
    await expect(
      rawQuery(
        f.dataDir,
        "UPDATE tasks SET status = 'blocked', current_run_id = NULL, lease_expires_at = NULL WHERE id = ?",
        [task.id],
      ),
    ).rejects.toThrow(refused);
    expect((await f.board.get(task.id)).status).toBe('running');
  });

  // SQLite boards made by older versions are upgraded; PostgreSQL boards start at this schema.
  it.runIf(ENGINE === 'sqlite')(
    'are added to a database made by the previous version without losing a row',
    async () => {
      const path = join(tempDir(), 'gatehouse.db');
      const old = openDatabase(path, { migrateTo: 1 });
      const insert = old.prepare(`INSERT INTO tasks (id, title, status, created_at, updated_at,
      origin, current_run_id, lease_expires_at, not_before, block_reason)
      VALUES (?, ?, ?, 1, 1, '{"kind":"api"}', ?, ?, ?, ?)`);
      insert.run('t_000000000001', 'forged done', 'done', 'r_000000000001', 99, null, null);
      insert.run('t_000000000002', 'running', 'running', 'r_000000000002', 99, null, null);
      insert.run('t_000000000003', 'blocked, no reason', 'blocked', null, null, 5, null);
      insert.run('t_000000000004', 'child', 'todo', null, null, null, null);
      old
        .prepare('INSERT INTO task_parents (task_id, parent_id) VALUES (?, ?)')
        .run('t_000000000004', 't_000000000001');
      old
        .prepare(
          `INSERT INTO runs (id, task_id, profile, token_hash, started_at, log_path)
      VALUES ('r_000000000002', 't_000000000002', 'demo', 'h', 1, '/tmp/l')`,
        )
        .run();
      old
        .prepare(
          `INSERT INTO comments (task_id, author, text, at) VALUES ('t_000000000002', 'me', 'hi', 1)`,
        )
        .run();
      old.close();

      const store = openStore(path);
      stores.push(store);
      expect(
        (await store.tasks.list({ order: 'asc', afterSeq: null, limit: 10 })).tasks.map((t) => [
          t.id,
          t.status,
          t.currentRunId,
          t.notBefore,
          t.blockReason,
        ]),
      ).toEqual([
        ['t_000000000001', 'done', null, null, null],
        ['t_000000000002', 'running', 'r_000000000002', null, null],
        ['t_000000000003', 'blocked', null, null, 'blocked'],
        // Its only parent is done: an older version left it waiting on nothing (promoted).
        ['t_000000000004', 'ready', null, null, null],
      ]);
      expect((await store.tasks.get('t_000000000004'))?.parents).toEqual(['t_000000000001']);
      expect(await store.runs.forTask('t_000000000002')).toHaveLength(1);
      const raw = new Database(path, { readonly: true });
      expect(raw.prepare('SELECT count(*) AS n FROM comments').get()).toEqual({ n: 1 });
      raw.close();
    },
  );
});
