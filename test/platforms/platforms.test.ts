import { describe, expect, it } from 'vitest';
import type { AdapterFactory } from '../../src/platforms/adapter.js';
import { api, startGateway } from '../helpers/app.js';
import {
  signedHeaders,
  telegramDouble,
  webhookReceiver,
  webhookSecret,
  type WebhookReceiver,
} from '../helpers/doubles.js';
import { waitFor } from '../helpers/wait.js';
import { profile } from '../helpers/workers.js';

const quickBreaker = {
  timeoutMs: 500,
  errorThresholdPercentage: 50,
  resetTimeoutMs: 300,
  volumeThreshold: 2,
};

function webhook(receiver: WebhookReceiver, extra: object = {}) {
  return {
    name: 'ops',
    type: 'webhook',
    homeChannel: 'ops-room',
    options: { url: receiver.url, secret: receiver.secret },
    breaker: quickBreaker,
    ...extra,
  };
}

async function platform(url: string, name: string) {
  return (await api(url, 'GET', `/platform/${name}`)).body;
}

async function platformEvents(url: string): Promise<string[]> {
  return (await api(url, 'GET', '/events?limit=1000')).body.events
    .filter((e: { taskId: string | null }) => e.taskId === null)
    .map((e: { kind: string }) => e.kind);
}

describe('a platform behind its circuit breaker', () => {
  it('opens after failures, answers 503 with Retry-After, probes half-open and closes when the service is back', async () => {
    const receiver = await webhookReceiver();
    receiver.status = 500;
    const gw = await startGateway({ platforms: [webhook(receiver)] });
    for (let i = 0; i < 2; i++) {
      const res = await api(gw.url, 'POST', '/platform/ops/send', { text: `try ${i}` });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('PLATFORM_UNAVAILABLE');
    }
    const open = await platform(gw.url, 'ops');
    expect(open.breaker).toMatchObject({ state: 'open', lastError: 'webhook answered HTTP 500' });
    expect(open.breaker.nextAttemptAt).toBeGreaterThan(open.breaker.openedAt);
    const rejected = await api(gw.url, 'POST', '/platform/ops/send', { text: 'fast fail' });
    expect(rejected.status).toBe(503);
    expect(rejected.body.error.message).toContain('circuit breaker is open');
    expect(Number(rejected.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await api(gw.url, 'GET', '/health')).status).toBe(200);
    const ready = await api(gw.url, 'GET', '/ready');
    expect(ready.body.platforms).toEqual([{ name: 'ops', state: 'retrying', status: 'degraded' }]);

    receiver.status = 200;
    await waitFor(
      'the half-open probe to be allowed',
      async () => (await platform(gw.url, 'ops')).breaker.state === 'half_open',
    );
    expect((await api(gw.url, 'POST', '/platform/ops/send', { text: 'probe' })).status).toBe(200);
    expect((await platform(gw.url, 'ops')).breaker.state).toBe('closed');
    expect(receiver.received.map((m) => m.text)).toEqual(['probe']);
    const kinds = await platformEvents(gw.url);
    expect(kinds).toEqual(
      expect.arrayContaining([
        'platform_connected',
        'breaker_opened',
        'breaker_half_open',
        'breaker_closed',
      ]),
    );
  });

  it('does not count a caller mistake (an unknown chat) against the platform', async () => {
    const receiver = await webhookReceiver();
    receiver.status = 404;
    const gw = await startGateway({ platforms: [webhook(receiver)] });
    for (let i = 0; i < 4; i++)
      expect(
        (await api(gw.url, 'POST', '/platform/ops/send', { channel: 'nope', text: 'x' })).status,
      ).toBe(400);
    expect((await platform(gw.url, 'ops')).breaker.state).toBe('closed');
  });

  it("pauses, resumes and reconnects on the operator's word", async () => {
    const receiver = await webhookReceiver();
    const gw = await startGateway({ platforms: [webhook(receiver)] });
    await waitFor('connected', async () => (await platform(gw.url, 'ops')).state === 'connected');
    expect((await api(gw.url, 'POST', '/platform/ops/pause')).body.state).toBe('paused');
    const paused = await api(gw.url, 'POST', '/platform/ops/send', { text: 'x' });
    expect(paused.status).toBe(503);
    expect((await api(gw.url, 'POST', '/platform/ops/resume')).status).toBe(200);
    await waitFor(
      'connected again',
      async () => (await platform(gw.url, 'ops')).state === 'connected',
    );
    expect((await api(gw.url, 'POST', '/platform/ops/send', { text: 'back' })).status).toBe(200);
    expect((await api(gw.url, 'POST', '/platform/ops/reconnect')).status).toBe(200);
    expect((await api(gw.url, 'POST', '/platform/nope/pause')).status).toBe(404);
    const kinds = await platformEvents(gw.url);
    expect(kinds).toEqual(expect.arrayContaining(['platform_paused', 'platform_resumed']));
  });

  it('keeps the last known error and open breaker across a restart', async () => {
    const receiver = await webhookReceiver();
    receiver.status = 502;
    const slow = { ...quickBreaker, resetTimeoutMs: 60_000 };
    const first = await startGateway({ platforms: [webhook(receiver, { breaker: slow })] });
    for (let i = 0; i < 2; i++) await api(first.url, 'POST', '/platform/ops/send', { text: 'x' });
    expect((await platform(first.url, 'ops')).breaker.state).toBe('open');
    await first.close();
    const second = await startGateway(
      { platforms: [webhook(receiver, { breaker: slow })] },
      { dataDir: first.dataDir },
    );
    const view = await platform(second.url, 'ops');
    expect(view.breaker).toMatchObject({ state: 'open', lastError: 'webhook answered HTTP 502' });
    // Two sends, and the shutdown notice that met the open breaker.
    expect(view.counters.sendFailures).toBe(3);
  });
});

describe('webhook inbound', () => {
  it('accepts a correctly signed /tasks command and answers 401 to a bad signature', async () => {
    const receiver = await webhookReceiver();
    const gw = await startGateway({ platforms: [webhook(receiver)] });
    const body = JSON.stringify({ channel: 'ops-room', text: '/task check the backups' });
    const bad = await api(
      gw.url,
      'POST',
      '/platform/ops/inbound',
      body,
      signedHeaders(webhookSecret('wrong-secret'), body),
    );
    expect(bad.status).toBe(401);
    const unsigned = await api(gw.url, 'POST', '/platform/ops/inbound', body);
    expect(unsigned.status).toBe(401);
    expect((await gw.kanban.board.counts()).ready).toBe(0);
    const good = await api(
      gw.url,
      'POST',
      '/platform/ops/inbound',
      body,
      signedHeaders(receiver.secret, body),
    );
    expect(good.status).toBe(202);
    await waitFor('the reply', () =>
      receiver.received.some((m) => m.text.startsWith('Created t_')),
    );
    const [task] = (await gw.kanban.board.list({ limit: 10 })).tasks;
    expect(task).toMatchObject({
      title: 'check the backups',
      origin: { kind: 'platform', platform: 'ops', channel: 'ops-room' },
    });
    const junk = JSON.stringify({ channel: 'c', text: 'x', extra: 1 });
    expect(
      (
        await api(
          gw.url,
          'POST',
          '/platform/ops/inbound',
          junk,
          signedHeaders(receiver.secret, junk),
        )
      ).status,
    ).toBe(400);
    const huge = JSON.stringify({ channel: 'c', text: 'x'.repeat(70_000) });
    expect(
      (
        await api(
          gw.url,
          'POST',
          '/platform/ops/inbound',
          huge,
          signedHeaders(receiver.secret, huge),
        )
      ).status,
    ).toBe(413);
  });
});

describe('telegram', () => {
  it('creates a task from /task, runs it and tells the chat it is done', async () => {
    const tg = await telegramDouble();
    const gw = await startGateway(
      {
        workers: { tickSeconds: 0.1, defaultProfile: 'ok', profiles: { ok: profile('complete') } },
        platforms: [
          {
            name: 'tg',
            type: 'telegram',
            options: { token: tg.token, apiBase: tg.url, pollTimeoutSeconds: 1 },
            breaker: quickBreaker,
          },
        ],
      },
      { dispatch: true },
    );
    await waitFor('connected', async () => (await platform(gw.url, 'tg')).state === 'connected');
    tg.say(42, '/task write the release notes');
    await waitFor('the reply', () => tg.sent.find((m) => m.text.startsWith('Created t_')));
    const done = await waitFor('the done notification', () =>
      tg.sent.find((m) => m.text.startsWith('Task ')),
    );
    expect(done.chat_id).toBe('42');
    expect(done.text).toMatch(/^Task t_[0-9a-f]{12} "write the release notes" is done: all done$/);
    tg.say(42, '/tasks');
    tg.say(42, '/frobnicate');
    await waitFor('the help', () => tg.sent.some((m) => m.text.startsWith('Commands:')));
    expect(tg.sent.some((m) => m.text === 'No open tasks.')).toBe(true);
  });

  it('tells the chat its task needs review, and takes /changes and /approve from that chat only', async () => {
    const tg = await telegramDouble();
    const gw = await startGateway(
      {
        workers: {
          tickSeconds: 0.1,
          defaultProfile: 'ok',
          profiles: { ok: profile('complete', { review: true }) },
        },
        platforms: [
          {
            name: 'tg',
            type: 'telegram',
            options: { token: tg.token, apiBase: tg.url, pollTimeoutSeconds: 1 },
            breaker: quickBreaker,
          },
        ],
      },
      { dispatch: true },
    );
    await waitFor('connected', async () => (await platform(gw.url, 'tg')).state === 'connected');
    tg.say(42, '/task draft the announcement');
    const created = await waitFor('the reply', () =>
      tg.sent.find((m) => m.text.startsWith('Created t_')),
    );
    const id = /t_[0-9a-f]{12}/.exec(created.text)![0];
    const asked = await waitFor('the review notice', () =>
      tg.sent.find((m) => m.text.includes('needs review')),
    );
    expect(asked.text).toBe(
      `Task ${id} "draft the announcement" needs review (/approve ${id}, or /changes ${id} TEXT): all done`,
    );
    // Another chat cannot answer for it; a task not in review is said to be so.
    tg.say(7, `/approve ${id}`);
    await waitFor('refused elsewhere', () =>
      tg.sent.find((m) => m.text === `No task ${id} of this chat.`),
    );
    tg.say(42, `/changes ${id} shorter, please`);
    await waitFor('sent back', () => tg.sent.find((m) => m.text.startsWith(`Sent ${id} back`)));
    const again = await waitFor('in review again', async () => {
      const t = (await api(gw.url, 'GET', `/tasks/${id}`)).body;
      return t.status === 'review' && t.runs.length === 2 && t.runs[1].endedAt ? t : null;
    });
    expect(again.runs).toHaveLength(2);
    tg.say(42, `/approve ${id}`);
    await waitFor('approved', () => tg.sent.find((m) => m.text === `Approved ${id}: it is done.`));
    expect((await api(gw.url, 'GET', `/tasks/${id}`)).body.status).toBe('done');
    await waitFor('the approved notice', () =>
      tg.sent.find((m) => m.text === `Task ${id} "draft the announcement" was approved`),
    );
    tg.say(42, `/approve ${id}`);
    await waitFor('not in review', () =>
      tg.sent.find((m) => m.text === `Task ${id} is done, not in review.`),
    );
    const events = (await api(gw.url, 'GET', `/tasks/${id}/events`)).body.events;
    expect(events.find((e: { kind: string }) => e.kind === 'changes_requested').payload).toEqual({
      text: 'shorter, please',
      author: 'tg:42',
      status: 'ready',
    });
  });

  it('holds /task to the API’s title rule: invisible titles refused, length in code points', async () => {
    const tg = await telegramDouble();
    const gw = await startGateway({
      workers: { maxConcurrent: 0 },
      platforms: [
        {
          name: 'tg',
          type: 'telegram',
          options: { token: tg.token, apiBase: tg.url, pollTimeoutSeconds: 1 },
          breaker: quickBreaker,
        },
      ],
    });
    await waitFor('connected', async () => (await platform(gw.url, 'tg')).state === 'connected');
    const refused = ['\u200b', '\u200b\u2060\ufeff', '\u0007\u0001', '😀'.repeat(501)];
    for (const title of refused) tg.say(5, `/task ${title}`);
    await waitFor('a reply to each', () => tg.sent.filter((m) => m.chat_id === '5').length === 4);
    expect(tg.sent.filter((m) => m.chat_id === '5').map((m) => m.text)).toEqual([
      'a title needs at least one visible character',
      'a title needs at least one visible character',
      'a title needs at least one visible character',
      'a title is at most 500 characters',
    ]);
    // 500 emoji are 1,000 UTF-16 units and 500 characters: the API takes them, and so does chat.
    const emoji = '😀'.repeat(500);
    tg.say(6, `/task ${emoji}`);
    await waitFor('the task', async () => (await gw.kanban.board.counts()).ready === 1);
    const [task] = (await gw.kanban.board.list({ limit: 10 })).tasks;
    expect(task!.title).toBe(emoji);
    const api500 = await api(gw.url, 'POST', '/tasks', { title: emoji });
    expect(api500.status).toBe(201);
    for (const title of refused)
      expect((await api(gw.url, 'POST', '/tasks', { title })).status).toBe(400);
    expect((await gw.kanban.board.counts()).ready).toBe(2);
  });

  it('never handles an update twice across a restart (the offset is persisted)', async () => {
    const tg = await telegramDouble();
    const config = {
      platforms: [
        {
          name: 'tg',
          type: 'telegram',
          options: { token: tg.token, apiBase: tg.url, pollTimeoutSeconds: 1 },
        },
      ],
    };
    const first = await startGateway(config);
    tg.say(7, '/task only once');
    await waitFor('the task', async () => (await first.kanban.board.counts()).ready === 1);
    await first.close();
    const second = await startGateway(config, { dataDir: first.dataDir });
    await waitFor('a few polls', () => tg.calls.filter((c) => c === 'getUpdates').length > 4);
    expect((await second.kanban.board.counts()).ready).toBe(1);
  });

  it('treats bad credentials as permanent (failed) and connects after an operator reconnect', async () => {
    const tg = await telegramDouble();
    tg.mode = 'unauthorized';
    const gw = await startGateway({
      platforms: [
        {
          name: 'tg',
          type: 'telegram',
          options: { token: tg.token, apiBase: tg.url, pollTimeoutSeconds: 1 },
        },
      ],
    });
    const failed = await waitFor('failed', async () => {
      const p = await platform(gw.url, 'tg');
      return p.state === 'failed' ? p : null;
    });
    // Permanent: no retry is scheduled (a transient failure would name when it tries again).
    expect(failed.nextRetryAt).toBeNull();
    tg.mode = 'ok';
    await api(gw.url, 'POST', '/platform/tg/reconnect');
    await waitFor('connected', async () => (await platform(gw.url, 'tg')).state === 'connected');
  });

  it('keeps retrying while the service is down and connects by itself when it returns', async () => {
    const tg = await telegramDouble();
    tg.mode = 'down';
    const gw = await startGateway({
      platforms: [
        {
          name: 'tg',
          type: 'telegram',
          options: { token: tg.token, apiBase: tg.url, pollTimeoutSeconds: 1 },
          breaker: quickBreaker,
        },
      ],
    });
    // Retrying, having heard the service's answer (on a loaded machine an attempt may time out
    // first, at the breaker's 500 ms: the next ones hear it).
    const view = await waitFor('retrying after getMe failed', async () => {
      const v = await platform(gw.url, 'tg');
      return v.state === 'retrying' && v.breaker.lastError?.includes('getMe') ? v : null;
    });
    expect(view.nextRetryAt).toBeGreaterThan(Date.now() - 1000);
    tg.mode = 'ok';
    await waitFor(
      'connected by itself',
      async () => (await platform(gw.url, 'tg')).state === 'connected',
      15_000,
    );
  });

  it('keeps a webhook’s outage across a restart until a send gets through', async () => {
    const receiver = await webhookReceiver();
    receiver.status = 500;
    const config = { platforms: [webhook(receiver)] };
    const first = await startGateway(config);
    for (let i = 0; i < 2; i++) await api(first.url, 'POST', '/platform/ops/send', { text: 'x' });
    expect((await platform(first.url, 'ops')).breaker.state).toBe('open');
    await first.close();
    // Its connect reaches nothing: starting again proves nothing about the receiver.
    const gw = await startGateway(config, { dataDir: first.dataDir });
    await waitFor('connected', async () => (await platform(gw.url, 'ops')).state !== 'connecting');
    const breakers = async () =>
      (await api(gw.url, 'GET', '/events?limit=1000')).body.events
        .filter((e: { kind: string }) => e.kind.startsWith('breaker_'))
        .map((e: { kind: string }) => e.kind);
    expect(await breakers()).toEqual(['breaker_opened']);
    expect((await platform(gw.url, 'ops')).breaker.outageSince).not.toBeNull();
    receiver.status = 200;
    await waitFor('a send that gets through', async () => {
      const res = await api(gw.url, 'POST', '/platform/ops/send', { text: 'back?' });
      return res.status === 200;
    });
    await waitFor('the outage closed', async () => (await breakers()).at(-1) === 'breaker_closed');
    expect((await platform(gw.url, 'ops')).breaker.outageSince).toBeNull();
  });

  it('records a long outage once, with how often it re-opened, not a pair of rows per probe', async () => {
    const tg = await telegramDouble();
    tg.mode = 'down';
    const config = {
      platforms: [
        {
          name: 'tg',
          type: 'telegram',
          options: { token: tg.token, apiBase: tg.url, pollTimeoutSeconds: 1 },
          breaker: { ...quickBreaker, resetTimeoutMs: 100 },
        },
      ],
    };
    const first = await startGateway(config);
    // Read while the breaker is open: half-open between probes (every 100 ms here) it has no
    // openedAt to compare with.
    const during = await waitFor(
      'three failed probes, the breaker open',
      async () => {
        const p = await platform(first.url, 'tg');
        return p.breaker.reopened >= 3 && p.breaker.openedAt !== null ? p : null;
      },
      20_000,
    );
    expect(during.breaker.outageSince).toBeLessThanOrEqual(during.breaker.openedAt);
    // A restart during the outage continues it rather than opening a new one.
    await first.close();
    const gw = await startGateway(config, { dataDir: first.dataDir });
    await waitFor(
      'more failed probes after the restart',
      async () => (await platform(gw.url, 'tg')).breaker.reopened >= during.breaker.reopened + 2,
      20_000,
    );
    tg.mode = 'ok';
    await waitFor(
      'connected',
      async () => (await platform(gw.url, 'tg')).state === 'connected',
      15_000,
    );
    // The view changes at once; its events are written just after.
    const events = await waitFor('breaker_closed', async () => {
      const breaker = (await api(gw.url, 'GET', '/events?limit=1000')).body.events.filter(
        (e: { kind: string }) => e.kind.startsWith('breaker_'),
      );
      return breaker.some((e: { kind: string }) => e.kind === 'breaker_closed') && breaker;
    });
    expect(events.map((e: { kind: string }) => e.kind)).toEqual([
      'breaker_opened',
      'breaker_half_open',
      'breaker_closed',
    ]);
    expect(events[2].payload.reopened).toBeGreaterThanOrEqual(during.breaker.reopened + 2);
    expect(events[2].payload.by).toBe('recovered');
    expect(events[2].payload.openForMs).toBeGreaterThan(0);
    expect((await platform(gw.url, 'tg')).breaker).toMatchObject({
      state: 'closed',
      outageSince: null,
      reopened: 0,
    });
  });
});

describe('notifications', () => {
  it('retries a failed notification later and delivers it exactly once', async () => {
    const receiver = await webhookReceiver();
    receiver.status = 503;
    const gw = await startGateway(
      {
        workers: { tickSeconds: 0.1, defaultProfile: 'ok', profiles: { ok: profile('complete') } },
        platforms: [webhook(receiver)],
      },
      { dispatch: true, notifyRetryMs: 100 },
    );
    const task = (await api(gw.url, 'POST', '/tasks', { title: 'tell the room' })).body;
    await waitFor('done', async () => (await gw.kanban.board.get(task.id)).status === 'done');
    await waitFor('a first send and a retry, both refused', () => receiver.attempts >= 2);
    expect(receiver.received).toEqual([]);
    receiver.status = 200;
    await waitFor('delivery', () => receiver.received.length > 0, 15_000);
    await waitFor(
      'nothing left to send',
      async () => (await gw.platforms.notificationBacklog()) === 0,
    );
    const about = receiver.received.filter((m) => m.text.includes(task.id));
    expect(about).toHaveLength(1);
    expect(about[0]).toMatchObject({ channel: 'ops-room', event: 'completed' });
  });
});

describe('misbehaving adapters', () => {
  it('never take the daemon down or hold up its shutdown', async () => {
    const receiver = await webhookReceiver();
    const never = new Promise<void>(() => undefined);
    const adapters: Record<string, AdapterFactory> = {
      thrower: () => ({
        connect: () => {
          throw new Error('sync boom');
        },
        send: () => {
          throw new Error('sync boom');
        },
        stop: () => {
          throw new Error('sync boom');
        },
      }),
      rejecter: () => ({
        connect: () => Promise.reject(new Error('async boom')),
        send: () => Promise.reject(new Error('async boom')),
        stop: () => Promise.reject(new Error('async boom')),
      }),
      hanger: () => ({ connect: () => never, send: () => never, stop: () => never }),
      slowsend: () => ({ connect: async () => undefined, send: () => never, stop: () => never }),
    };
    const platforms = Object.keys(adapters).map((name) => ({
      ...webhook(receiver),
      name,
      breaker: { ...quickBreaker, timeoutMs: 300 },
    }));
    const gw = await startGateway({ platforms }, { adapters });
    await waitFor(
      'the thrower to be retrying',
      async () => (await platform(gw.url, 'thrower')).state === 'retrying',
    );
    await waitFor(
      'the hanger to time out',
      async () => (await platform(gw.url, 'hanger')).breaker.timeouts > 0,
    );
    expect((await platform(gw.url, 'rejecter')).breaker.lastError).toBe('async boom');
    expect((await platform(gw.url, 'thrower')).breaker.lastError).toBe('sync boom');
    expect((await api(gw.url, 'POST', '/platform/thrower/send', { text: 'x' })).status).toBe(503);
    expect((await api(gw.url, 'GET', '/health')).status).toBe(200);
    expect((await api(gw.url, 'POST', '/tasks', { title: 'the board carries on' })).status).toBe(
      201,
    );
    const started = Date.now();
    await gw.close();
    // Notices (2 s bound) and adapter stops (2 s bound): well inside the 10 s shutdown deadline.
    expect(Date.now() - started).toBeLessThan(6000);
  });
});
