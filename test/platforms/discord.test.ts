// The Discord adapter against a local double of REST v10 and the Gateway: a channel's /task runs
// and the channel hears it is done; heartbeats unacknowledged mean a dead connection; opcode 7
// and a resumable invalid session resume and replay what was missed, once; a session that
// cannot be resumed identifies anew; rate limits are waited out and a refusal dropped.
import { describe, expect, it } from 'vitest';
import { api, startGateway, type TestGateway } from '../helpers/app.js';
import { discordDouble, type DiscordDouble } from '../helpers/discord-double.js';
import { waitFor } from '../helpers/wait.js';
import { profile } from '../helpers/workers.js';

const quickBreaker = {
  timeoutMs: 2000,
  errorThresholdPercentage: 50,
  resetTimeoutMs: 300,
  volumeThreshold: 2,
};

function discord(dc: DiscordDouble, extra: object = {}) {
  return {
    name: 'dc',
    type: 'discord',
    options: { botToken: dc.token, apiBase: dc.url },
    breaker: quickBreaker,
    ...extra,
  };
}

async function view(url: string) {
  return (await api(url, 'GET', '/platform/dc')).body;
}

async function titles(gw: TestGateway): Promise<string[]> {
  const { tasks } = await gw.kanban.board.list({ limit: 100 });
  return tasks.map((t) => t.title).sort();
}

describe('discord', () => {
  it('creates a task from /task in a channel, runs it and tells the channel it is done', async () => {
    const dc = await discordDouble();
    const gw = await startGateway(
      {
        workers: { tickSeconds: 0.1, defaultProfile: 'ok', profiles: { ok: profile('complete') } },
        platforms: [discord(dc)],
      },
      { dispatch: true },
    );
    await waitFor('connected', async () => (await view(gw.url)).state === 'connected');
    expect(dc.identifies).toBe(1);
    dc.say('C7', '/task write the release notes');
    dc.say('C7', '/task from a bot', true);
    await waitFor('the reply', () => dc.posted.find((m) => m.content.startsWith('Created t_')));
    const done = await waitFor('the done notice', () =>
      dc.posted.find((m) => m.content.startsWith('Task ')),
    );
    expect(done.channel).toBe('C7');
    expect(done.content).toMatch(
      /^Task t_[0-9a-f]{12} "write the release notes" is done: all done$/,
    );
    expect(await titles(gw)).toEqual(['write the release notes']);
  });

  it('resumes after opcode 7, a zombie connection, a resumable invalid session and a dropped link, replaying what it missed once; identifies anew when it cannot resume', async () => {
    const dc = await discordDouble();
    const gw = await startGateway({ workers: { maxConcurrent: 0 }, platforms: [discord(dc)] });
    await waitFor('connected', async () => (await view(gw.url)).state === 'connected');
    dc.say('C1', '/task one');
    await waitFor('one', async () => (await titles(gw)).length === 1);

    dc.askReconnect();
    dc.say('C1', '/task two');
    await waitFor('resumed', () => dc.resumes === 1, 15_000);
    dc.ackHeartbeats = false;
    dc.say('C1', '/task three');
    await waitFor('a zombie found and resumed', () => dc.resumes === 2, 15_000);
    dc.ackHeartbeats = true;
    dc.invalidate(true);
    dc.say('C1', '/task four');
    await waitFor('resumed again', () => dc.resumes === 3, 15_000);
    await waitFor('four', async () => (await titles(gw)).length === 4);
    // Cut without a word: resumed, and what came meanwhile replayed.
    dc.drop();
    dc.say('C1', '/task cut');
    await waitFor('resumed after the cut', () => dc.resumes === 4, 15_000);
    await waitFor('cut', async () => (await titles(gw)).length === 5);
    expect(dc.identifies).toBe(1);

    dc.invalidate(false);
    await waitFor('identified anew', () => dc.identifies === 2, 15_000);
    dc.say('C1', '/task five');
    await waitFor('five', async () => (await titles(gw)).length === 6);
    expect(await titles(gw)).toEqual(['cut', 'five', 'four', 'one', 'three', 'two']);
  });

  it('is failed by a refused token, waits out a rate limit and drops a notice a channel refuses', async () => {
    const bad = await discordDouble();
    bad.mode = 'unauthorized';
    const failed = await startGateway({ platforms: [discord(bad)] });
    await waitFor('failed', async () => (await view(failed.url)).state === 'failed');
    expect((await view(failed.url)).breaker.lastError).toContain('check the bot token');

    const dc = await discordDouble();
    const gw = await startGateway(
      {
        workers: { tickSeconds: 0.1, defaultProfile: 'ok', profiles: { ok: profile('complete') } },
        platforms: [discord(dc, { homeChannel: 'CHOME' })],
      },
      { dispatch: true, notifyRetryMs: 200 },
    );
    await waitFor('connected', async () => (await view(gw.url)).state === 'connected');
    dc.mode = 'limited';
    const id = (await api(gw.url, 'POST', '/tasks', { title: 'rate limited' })).body.id;
    await waitFor('the notice', () => dc.posted.some((m) => m.content.includes(id)), 15_000);
    expect(dc.posts).toBeGreaterThan(dc.posted.length);
    expect(dc.posted.filter((m) => m.content.includes(id))).toHaveLength(1);

    dc.refuseChannels.add('CHOME');
    const refused = (await api(gw.url, 'POST', '/tasks', { title: 'refused' })).body.id;
    await waitFor('dropped', async () => {
      const events = (await api(gw.url, 'GET', `/tasks/${refused}/events`)).body.events;
      return events.some((e: { kind: string }) => e.kind === 'notification_dropped');
    });
    dc.refuseChannels.clear();
    const later = (await api(gw.url, 'POST', '/tasks', { title: 'later' })).body.id;
    await waitFor('the later notice', () => dc.posted.some((m) => m.content.includes(later)));
  });
});
