// The Matrix adapter against a local homeserver playing the client-server API: a room's /task
// runs and the room hears it is done; a message is handled once across restarts; bad tokens and
// outages are the breaker's; a rate limit is waited out; a room that refuses is dropped.
import { describe, expect, it } from 'vitest';
import { quickBreaker, matrixOptions } from '../helpers/chat-platforms.js';
import { api, startGateway } from '../helpers/app.js';
import { matrixDouble, type MatrixDouble } from '../helpers/matrix-double.js';
import { waitFor } from '../helpers/wait.js';
import { profile } from '../helpers/workers.js';

function matrix(mx: MatrixDouble, extra: object = {}) {
  return {
    name: 'mx',
    type: 'matrix',
    options: matrixOptions(mx),
    breaker: quickBreaker,
    ...extra,
  };
}

async function state(url: string): Promise<string> {
  return (await api(url, 'GET', '/platform/mx')).body.state;
}

const ROOM = '!ops:example.org';

/**
 * The bot's first sync (the history up to then, skipped) is done and it polls for what comes
 * next: a message said before that is history, never a command.
 */
function listening(mx: { calls: string[] }): Promise<unknown> {
  return waitFor(
    'the first sync done',
    () => mx.calls.filter((c) => c === 'GET /sync').length >= 2,
  );
}

describe('matrix', () => {
  it('creates a task from /task in a room, runs it and tells the room it is done', async () => {
    const mx = await matrixDouble();
    const gw = await startGateway(
      {
        workers: { tickSeconds: 0.1, defaultProfile: 'ok', profiles: { ok: profile('complete') } },
        platforms: [matrix(mx)],
      },
      { dispatch: true },
    );
    await waitFor('connected', async () => (await state(gw.url)) === 'connected');
    await listening(mx);
    mx.say(ROOM, '/task write the release notes');
    // What the bot says itself is not a command.
    mx.say(ROOM, '/task from the bot', mx.userId);
    await waitFor('the reply', () => mx.sent.find((m) => m.body.startsWith('Created t_')));
    const done = await waitFor('the done notice', () =>
      mx.sent.find((m) => m.body.startsWith('Task ')),
    );
    expect(done.room).toBe(ROOM);
    expect(done.body).toMatch(/^Task t_[0-9a-f]{12} "write the release notes" is done: all done$/);
    expect((await gw.kanban.board.list({ limit: 10 })).tasks.map((t) => t.title)).toEqual([
      'write the release notes',
    ]);
  });

  it('starts after the history, and never handles a message twice across a restart', async () => {
    const mx = await matrixDouble();
    mx.say(ROOM, '/task said before gatehouse came');
    const config = { workers: { maxConcurrent: 0 }, platforms: [matrix(mx)] };
    const first = await startGateway(config);
    await waitFor('connected', async () => (await state(first.url)) === 'connected');
    await listening(mx);
    for (let i = 0; i < 5; i++) mx.say(ROOM, `/task once ${i}`);
    await waitFor('the tasks', async () => (await first.kanban.board.counts()).ready === 5);
    await first.close();
    mx.say(ROOM, '/task while it was away');
    const second = await startGateway(config, { dataDir: first.dataDir });
    await waitFor('the last one', async () => (await second.kanban.board.counts()).ready === 6);
    await waitFor('a few syncs', () => mx.calls.filter((c) => c === 'GET /sync').length > 12);
    const titles = (await second.kanban.board.list({ limit: 20 })).tasks.map((t) => t.title);
    expect(titles.sort()).toEqual([
      ...[0, 1, 2, 3, 4].map((i) => `once ${i}`),
      'while it was away',
    ]);
  });

  it('treats a refused token or a token of another user as permanent (failed)', async () => {
    const mx = await matrixDouble();
    mx.mode = 'unauthorized';
    const gw = await startGateway({ platforms: [matrix(mx)] });
    await waitFor('failed', async () => (await state(gw.url)) === 'failed');
    expect((await api(gw.url, 'GET', '/platform/mx')).body.breaker.lastError).toContain(
      'M_UNKNOWN_TOKEN',
    );
    const other = await matrixDouble('@someone:example.org');
    const gw2 = await startGateway({
      platforms: [
        matrix(other, { options: { ...matrix(other).options, userId: '@me:example.org' } }),
      ],
    });
    await waitFor('failed', async () => (await state(gw2.url)) === 'failed');
    expect((await api(gw2.url, 'GET', '/platform/mx')).body.breaker.lastError).toContain(
      "@someone:example.org's, not @me:example.org's",
    );
  });

  it('keeps notices through an outage and a rate limit, sends each once, and drops what a room refuses', async () => {
    const mx = await matrixDouble();
    const gw = await startGateway(
      {
        workers: { tickSeconds: 0.1, defaultProfile: 'ok', profiles: { ok: profile('complete') } },
        platforms: [matrix(mx, { homeChannel: ROOM })],
      },
      { dispatch: true, notifyRetryMs: 200 },
    );
    await waitFor('connected', async () => (await state(gw.url)) === 'connected');
    mx.mode = 'down';
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await api(gw.url, 'POST', '/tasks', { title: `during the outage ${i}` })).body.id);
    await waitFor('the tasks done', async () => (await gw.kanban.board.counts()).done === 3);
    await waitFor('the breaker open', async () => {
      const view = (await api(gw.url, 'GET', '/platform/mx')).body;
      return view.breaker.state === 'open';
    });
    mx.mode = 'limited';
    await waitFor('a send refused for the rate', () => mx.sends > 0);
    // Sends taken but answered with an error: sent again with the same txnId, the same message.
    mx.mode = 'answer-lost';
    await waitFor('a send taken', () => mx.sent.length > 0);
    const before = mx.sends;
    await waitFor('sent again', () => mx.sends > before + 1);
    mx.mode = 'ok';
    await waitFor(
      'every notice',
      () =>
        ids.every((id) => mx.sent.some((m) => m.body.includes(id) && m.body.includes('is done'))),
      20_000,
    );
    for (const id of ids)
      expect(mx.sent.filter((m) => m.body.includes(id) && m.body.includes('is done'))).toHaveLength(
        1,
      );

    // A room the bot was removed from refuses for good: dropped, the next ones still go.
    mx.refuseRooms.add(ROOM);
    const refused = (await api(gw.url, 'POST', '/tasks', { title: 'refused' })).body.id;
    await waitFor('dropped', async () => {
      const events = (await api(gw.url, 'GET', `/tasks/${refused}/events`)).body.events;
      return events.some((e: { kind: string }) => e.kind === 'notification_dropped');
    });
    mx.refuseRooms.clear();
    const later = (await api(gw.url, 'POST', '/tasks', { title: 'later' })).body.id;
    await waitFor('the later notice', () =>
      mx.sent.some((m) => m.body.includes(later) && m.body.includes('is done')),
    );
  });
});
