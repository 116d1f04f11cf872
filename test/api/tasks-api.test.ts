import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pidExists } from '../../src/proc/index.js';
import { api, boardSnapshot, startGateway, type TestGateway } from '../helpers/app.js';
import { attachSleeper, claim } from '../helpers/board.js';
import { waitFor } from '../helpers/wait.js';

async function create(gw: TestGateway, body: object = { title: 'a task' }) {
  const res = await api(gw.url, 'POST', '/tasks', body);
  expect(res.status).toBe(201);
  return res.body;
}

describe('/tasks CRUD', () => {
  it('creates a task (201) with every field of the contract and lists it', async () => {
    const gw = await startGateway();
    const task = await create(gw, {
      title: 'write notes',
      body: 'details',
      priority: 5,
      maxRuntimeSeconds: 30,
      maxRetries: 3,
    });
    expect(task).toMatchObject({
      title: 'write notes',
      body: 'details',
      assignee: null,
      status: 'ready',
      priority: 5,
      parents: [],
      maxRuntimeSeconds: 30,
      maxRetries: 3,
      consecutiveFailures: 0,
      lastFailureError: null,
      result: null,
      summary: null,
      currentRunId: null,
      blockReason: null,
      notBefore: null,
      origin: { kind: 'api' },
      startedAt: null,
      completedAt: null,
    });
    expect(task.id).toMatch(/^t_[0-9a-f]{12}$/);
    expect(typeof task.createdAt).toBe('number');
    const shown = await api(gw.url, 'GET', `/tasks/${task.id}`);
    expect(shown.body).toEqual({
      ...task,
      runs: [],
      usage: null,
      budgetInForce: null,
      spent: { usd: 0, tokens: 0, runs: 0 },
      children: [],
      worker: null,
    });
    const listed = await api(gw.url, 'GET', '/tasks');
    expect(listed.body).toEqual({ tasks: [task], nextCursor: null });
  });

  it('pages through tasks with a cursor, each exactly once, and filters by status and assignee', async () => {
    const gw = await startGateway({ workers: { profiles: { other: { command: ['true'] } } } });
    const ids: string[] = [];
    for (let i = 0; i < 7; i++)
      ids.push((await create(gw, { title: `t${i}`, assignee: i % 2 ? 'other' : null })).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await api(
        gw.url,
        'GET',
        `/tasks?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.tasks.map((t: { id: string }) => t.id));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    const others = await api(gw.url, 'GET', '/tasks?assignee=other');
    expect(others.body.tasks).toHaveLength(3);
    await api(gw.url, 'POST', `/tasks/${ids[0]}/archive`);
    const archived = await api(gw.url, 'GET', '/tasks?status=archived');
    expect(archived.body.tasks.map((t: { id: string }) => t.id)).toEqual([ids[0]]);
    expect((await api(gw.url, 'GET', '/tasks?cursor=bm9wZQ')).status).toBe(400);
    expect((await api(gw.url, 'GET', '/tasks?limit=0')).status).toBe(400);
    expect((await api(gw.url, 'GET', '/tasks?limit=1001')).status).toBe(400);
    expect((await api(gw.url, 'GET', '/tasks?status=lost')).status).toBe(400);
  });

  it('edits fields with PATCH and records an edited event', async () => {
    const gw = await startGateway();
    const task = await create(gw);
    const res = await api(gw.url, 'PATCH', `/tasks/${task.id}`, { title: 'renamed', priority: 2 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ title: 'renamed', priority: 2 });
    const events = await api(gw.url, 'GET', `/tasks/${task.id}/events`);
    expect(events.body.events.map((e: { kind: string }) => e.kind)).toEqual(['created', 'edited']);
    expect(events.body.events[1].payload).toEqual({ fields: ['title', 'priority'] });
  });

  it('deletes only archived tasks: 409 before, 204 after, then 404', async () => {
    const gw = await startGateway();
    const task = await create(gw);
    const refused = await api(gw.url, 'DELETE', `/tasks/${task.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('TASK_NOT_ARCHIVED');
    expect((await api(gw.url, 'POST', `/tasks/${task.id}/archive`)).status).toBe(200);
    expect((await api(gw.url, 'DELETE', `/tasks/${task.id}`)).status).toBe(204);
    expect((await api(gw.url, 'GET', `/tasks/${task.id}`)).status).toBe(404);
  });

  it('holds a child in todo until its parent is done, then promotes it', async () => {
    const gw = await startGateway();
    const parent = await create(gw, { title: 'parent' });
    const child = await create(gw, { title: 'child', parents: [parent.id] });
    expect(child.status).toBe('todo');
    expect(child.parents).toEqual([parent.id]);
    const claimed = await claim(gw.kanban.board, gw.dataDir, parent.id);
    const done = await api(
      gw.url,
      'POST',
      `/tasks/${parent.id}/complete`,
      { summary: 'ok' },
      { authorization: `Bearer ${claimed.token}` },
    );
    expect(done.status).toBe(200);
    expect((await api(gw.url, 'GET', `/tasks/${child.id}`)).body.status).toBe('ready');
    const missing = await api(gw.url, 'POST', '/tasks', {
      title: 'orphan',
      parents: ['t_000000000000'],
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain('t_000000000000');
  });

  it('round-trips hostile text verbatim', async () => {
    const gw = await startGateway();
    const hostile = [
      `'; DROP TABLE tasks; --`,
      `"quoted" \\ back\\slash`,
      'control \u0001\u0007\u001b[31m chars\ttab\nnewline',
      'right-to-left \u202Eevil\u202C and \u200F marks',
      'emoji 🧨🔥👩‍👩‍👧 and astral 𝕏',
      '<script>alert(1)</script><img src=x onerror=alert(1)>',
    ];
    for (const text of hostile) {
      const task = await create(gw, { title: text, body: text });
      const shown = await api(gw.url, 'GET', `/tasks/${task.id}`);
      expect(shown.body.title).toBe(text);
      expect(shown.body.body).toBe(text);
      const comment = await api(gw.url, 'POST', `/tasks/${task.id}/comments`, { text });
      expect(comment.status).toBe(201);
      expect(comment.body.text).toBe(text);
    }
  });
});

describe('bad input changes nothing', () => {
  it.each([
    ['malformed JSON', '{"title":', 400, 'BAD_REQUEST'],
    ['a wrong type', { title: 5 }, 400, 'VALIDATION_FAILED'],
    ['an unknown field', { title: 'x', colour: 'red' }, 400, 'VALIDATION_FAILED'],
    ['a blank title', { title: '   ' }, 400, 'VALIDATION_FAILED'],
    ['a title over 500 characters', { title: 'x'.repeat(501) }, 400, 'VALIDATION_FAILED'],
    ['an unknown assignee', { title: 'x', assignee: 'nobody' }, 400, 'VALIDATION_FAILED'],
    ['an oversized body', { title: 'x', body: 'y'.repeat(1_100_000) }, 413, 'PAYLOAD_TOO_LARGE'],
  ])('POST /tasks with %s', async (_name, body, status, code) => {
    const gw = await startGateway();
    await create(gw);
    const before = await boardSnapshot(gw);
    const res = await api(gw.url, 'POST', '/tasks', body);
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    expect(res.body.error.message.length).toBeGreaterThan(5);
    expect(await boardSnapshot(gw)).toEqual(before);
  });

  it('refuses every number in a query that is not a finite decimal integer in range', async () => {
    const gw = await startGateway();
    const task = await create(gw);
    const claimed = await claim(gw.kanban.board, gw.dataDir, task.id);
    const newest = await gw.kanban.board.events.lastId();
    const before = await boardSnapshot(gw);
    const routes = [
      '/tasks?limit=',
      '/events?limit=',
      '/events?after=',
      `/tasks/${task.id}/events?limit=`,
      `/tasks/${task.id}/events?after=`,
      `/runs/${claimed.run.id}/log?tail=`,
    ];
    const bad = ['Infinity', '-Infinity', '1e400', '1e3', '0x10', '%205', '5.5', 'NaN', '1e21'];
    for (const route of routes) {
      for (const value of bad) {
        const res = await api(gw.url, 'GET', `${route}${value}`);
        expect({ route, value, status: res.status }).toEqual({ route, value, status: 400 });
        expect(res.body.error.code).toBe('VALIDATION_FAILED');
      }
    }
    // An after the board has never reached matches nothing now, and would skip what comes next.
    for (const route of ['/events?after=', `/tasks/${task.id}/events?after=`]) {
      const res = await api(gw.url, 'GET', `${route}${newest + 1}`);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(`the newest is ${newest}`);
      expect((await api(gw.url, 'GET', `${route}${newest}`)).status).toBe(200);
    }
    expect((await api(gw.url, 'GET', '/tasks?limit=1000')).status).toBe(200);
    expect(await boardSnapshot(gw)).toEqual(before);
  });

  it('names the unknown field', async () => {
    const gw = await startGateway();
    const res = await api(gw.url, 'POST', '/tasks', { title: 'x', colour: 'red' });
    expect(res.body.error.message).toBe('body: unknown field "colour"');
  });

  it('answers 404 for unknown ids and routes, 409 for illegal transitions', async () => {
    const gw = await startGateway();
    const task = await create(gw);
    const before = await boardSnapshot(gw);
    for (const path of ['/tasks/t_000000000000', '/tasks/../../etc/passwd', '/tasks/%00']) {
      expect((await api(gw.url, 'GET', path)).status).toBe(404);
    }
    expect((await api(gw.url, 'POST', '/tasks/t_000000000000/archive')).status).toBe(404);
    expect((await api(gw.url, 'GET', '/runs/r_000000000000/log')).status).toBe(404);
    expect((await api(gw.url, 'GET', '/runs/..%2F..%2Fgatehouse.db/log')).status).toBe(404);
    expect((await api(gw.url, 'GET', '/nowhere')).body.error.code).toBe('NOT_FOUND');
    const unblock = await api(gw.url, 'POST', `/tasks/${task.id}/unblock`);
    expect(unblock.status).toBe(409);
    expect(unblock.body.error.code).toBe('INVALID_TRANSITION');
    expect((await api(gw.url, 'POST', `/tasks/${task.id}/reclaim`)).status).toBe(409);
    expect((await api(gw.url, 'PATCH', `/tasks/${task.id}`, {})).status).toBe(400);
    expect(await boardSnapshot(gw)).toEqual(before);
  });

  it('answers /ready with 503 and NOT_READY naming what is down, then 200 once it dispatches', async () => {
    const gw = await startGateway();
    const before = await api(gw.url, 'GET', '/ready');
    expect(before.status).toBe(503);
    expect(before.body.ready).toBe(false);
    expect(before.body.subsystems.dispatcher).toEqual({ status: 'down' });
    expect(before.body.error).toEqual({
      code: 'NOT_READY',
      message: 'not ready: host is down: joining the board; dispatcher is down',
    });
    await gw.dispatcher.start(gw.url);
    const after = await api(gw.url, 'GET', '/ready');
    expect(after.status).toBe(200);
    expect(after.body.ready).toBe(true);
    expect(after.body).not.toHaveProperty('error');
  });

  it('needs the API token on every route but /health when one is set', async () => {
    const token = 'a-long-enough-api-token';
    const gw = await startGateway(
      { api: { token }, workers: { maxConcurrent: 0 } },
      { dispatch: true },
    );
    expect((await api(gw.url, 'GET', '/health')).status).toBe(200);
    // The public routes stay public whatever query they carry; the others do not open with one.
    for (const path of ['/health?x=1', '/docs?x=1', '/docs/?x=1', '/openapi.json?x=1'])
      expect({ path, status: (await fetch(`${gw.url}${path}`)).status }).toEqual({
        path,
        status: 200,
      });
    expect((await api(gw.url, 'GET', '/tasks?x=/docs/')).status).toBe(401);
    const refused: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong-token-of-some-length' },
      { authorization: token },
    ];
    for (const headers of refused) {
      const res = await api(gw.url, 'GET', '/tasks', undefined, headers);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
    }
    expect((await api(gw.url, 'POST', '/tasks', { title: 'x' })).status).toBe(401);
    expect((await gw.kanban.board.counts()).ready).toBe(0);
    expect(
      (await api(gw.url, 'GET', '/tasks', undefined, { authorization: `Bearer ${token}` })).status,
    ).toBe(200);
    expect(
      (await api(gw.url, 'GET', '/ready', undefined, { authorization: `Bearer ${token}` })).status,
    ).toBe(200);
  });
});

describe('worker routes', () => {
  it('completes with the run token, idempotently, and refuses other tokens', async () => {
    const gw = await startGateway();
    const task = await create(gw);
    const other = await create(gw, { title: 'other' });
    const otherClaim = await claim(gw.kanban.board, gw.dataDir, other.id);
    const claimed = await claim(gw.kanban.board, gw.dataDir, task.id);
    const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
    const path = `/tasks/${task.id}/complete`;

    expect((await api(gw.url, 'POST', path, { summary: 's' })).status).toBe(401);
    const foreign = await api(gw.url, 'POST', path, { summary: 's' }, bearer(otherClaim.token));
    expect(foreign.status).toBe(403);
    expect((await api(gw.url, 'POST', path, { summary: 's' }, bearer('f'.repeat(64)))).status).toBe(
      403,
    );
    expect((await api(gw.url, 'GET', `/tasks/${task.id}`)).body.status).toBe('running');

    const done = await api(
      gw.url,
      'POST',
      path,
      { summary: 'shipped', result: { pr: 42 } },
      bearer(claimed.token),
    );
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      status: 'done',
      summary: 'shipped',
      result: { pr: 42 },
      currentRunId: null,
    });
    const again = await api(
      gw.url,
      'POST',
      path,
      { summary: 'shipped', result: { pr: 42 } },
      bearer(claimed.token),
    );
    expect(again.status).toBe(200);
    const kinds = (await api(gw.url, 'GET', `/tasks/${task.id}/events`)).body.events.map(
      (e: { kind: string }) => e.kind,
    );
    expect(kinds.filter((k: string) => k === 'completed')).toHaveLength(1);
    const runs = (await api(gw.url, 'GET', `/tasks/${task.id}/runs`)).body.runs;
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ id: claimed.run.id, outcome: 'completed', summary: 'shipped' });
    expect(runs[0].endedAt).toBeGreaterThan(0);
  });

  it('refuses the token of an old run with 409', async () => {
    const gw = await startGateway();
    const task = await create(gw);
    const first = await claim(gw.kanban.board, gw.dataDir, task.id);
    expect((await api(gw.url, 'POST', `/tasks/${task.id}/reclaim`)).status).toBe(200);
    await claim(gw.kanban.board, gw.dataDir, task.id);
    const res = await api(
      gw.url,
      'POST',
      `/tasks/${task.id}/complete`,
      {},
      { authorization: `Bearer ${first.token}` },
    );
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('RUN_MISMATCH');
    expect((await api(gw.url, 'GET', `/tasks/${task.id}`)).body.status).toBe('running');
  });

  it('blocks with a reason (sticky) and unblocks with the failure counter reset', async () => {
    const gw = await startGateway();
    const task = await create(gw);
    const claimed = await claim(gw.kanban.board, gw.dataDir, task.id);
    const auth = { authorization: `Bearer ${claimed.token}` };
    expect(
      (await api(gw.url, 'POST', `/tasks/${task.id}/heartbeat`, { note: 'half way' }, auth)).status,
    ).toBe(200);
    expect((await api(gw.url, 'POST', `/tasks/${task.id}/block`, {}, auth)).status).toBe(400);
    const blocked = await api(
      gw.url,
      'POST',
      `/tasks/${task.id}/block`,
      { reason: 'needs a key' },
      auth,
    );
    expect(blocked.body).toMatchObject({ status: 'blocked', blockReason: 'needs a key' });
    const unblocked = await api(gw.url, 'POST', `/tasks/${task.id}/unblock`);
    expect(unblocked.body).toMatchObject({
      status: 'ready',
      blockReason: null,
      consecutiveFailures: 0,
    });
    const events = (await api(gw.url, 'GET', `/tasks/${task.id}/events`)).body.events;
    expect(events.map((e: { kind: string }) => e.kind)).toEqual([
      'created',
      'claimed',
      'heartbeat',
      'blocked',
      'unblocked',
    ]);
    expect(events[2].payload).toEqual({ note: 'half way' });
  });
});

describe('operator transitions on a running task', () => {
  it('lets exactly one of two concurrent archives win and kill the worker; one archived event', async () => {
    const gw = await startGateway();
    const task = await create(gw);
    const claimed = await claim(gw.kanban.board, gw.dataDir, task.id);
    const pid = await attachSleeper(gw.kanban.board, claimed);
    const [a, b] = await Promise.all([
      api(gw.url, 'POST', `/tasks/${task.id}/archive`),
      api(gw.url, 'POST', `/tasks/${task.id}/archive`),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    await waitFor('the worker to be gone', () => !pidExists(pid));
    const events = (await api(gw.url, 'GET', `/tasks/${task.id}/events`)).body.events;
    const archived = events.filter((e: { kind: string }) => e.kind === 'archived');
    expect(archived).toHaveLength(1);
    expect(archived[0].payload).toMatchObject({
      prevPid: pid,
      terminated: true,
      sigkill: false,
      survived: false,
    });
    const runs = (await api(gw.url, 'GET', `/tasks/${task.id}/runs`)).body.runs;
    expect(runs[0].outcome).toBe('archived');
  });

  it('lets only one of complete and archive win from running', async () => {
    const gw = await startGateway();
    const task = await create(gw);
    const claimed = await claim(gw.kanban.board, gw.dataDir, task.id);
    await attachSleeper(gw.kanban.board, claimed);
    const [archive, complete] = await Promise.all([
      api(gw.url, 'POST', `/tasks/${task.id}/archive`),
      api(
        gw.url,
        'POST',
        `/tasks/${task.id}/complete`,
        {},
        { authorization: `Bearer ${claimed.token}` },
      ),
    ]);
    const kinds = (await api(gw.url, 'GET', `/tasks/${task.id}/events`)).body.events.map(
      (e: { kind: string }) => e.kind,
    );
    const runOutcome = (await api(gw.url, 'GET', `/tasks/${task.id}/runs`)).body.runs[0].outcome;
    if (complete.status === 200) {
      // Completion won the run; the archive then archived a done task.
      expect(runOutcome).toBe('completed');
      expect(kinds.filter((k: string) => k === 'completed')).toHaveLength(1);
    } else {
      expect(complete.status).toBe(409);
      expect(runOutcome).toBe('archived');
      expect(kinds).not.toContain('completed');
    }
    expect(archive.status).toBe(200);
    expect(kinds.filter((k: string) => k === 'archived')).toHaveLength(1);
  });
});

describe('history routes', () => {
  it('serves events after an id, a run log tail, and admin stop/restart', async () => {
    const gw = await startGateway();
    const task = await create(gw);
    await api(gw.url, 'POST', `/tasks/${task.id}/comments`, { text: 'first' });
    const all = (await api(gw.url, 'GET', '/events')).body.events;
    expect(all.map((e: { kind: string }) => e.kind)).toEqual(['created', 'commented']);
    const after = (await api(gw.url, 'GET', `/events?after=${all[0].id}`)).body.events;
    expect(after).toEqual([all[1]]);
    expect((await api(gw.url, 'GET', '/events?after=-1')).status).toBe(400);

    const claimed = await claim(gw.kanban.board, gw.dataDir, task.id);
    mkdirSync(dirname(claimed.run.logPath), { recursive: true });
    writeFileSync(
      claimed.run.logPath,
      Array.from({ length: 50 }, (_, i) => `line ${i}`).join('\n') + '\n',
    );
    const tail = await api(gw.url, 'GET', `/runs/${claimed.run.id}/log?tail=3`);
    expect(tail.body).toBe('line 47\nline 48\nline 49\n');
    expect(tail.headers.get('content-type')).toContain('text/plain');

    expect((await api(gw.url, 'POST', '/admin/restart')).body).toEqual({
      status: 'stopping',
      exitCode: 75,
    });
    await waitFor('the restart request', () => gw.stops.length === 1);
    expect(gw.stops[0]!.code).toBe(75);
  });
});
