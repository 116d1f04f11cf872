// The Slack adapter against a local double of the Web API and Socket Mode: a channel's /task
// runs and the channel hears it is done; envelopes are acknowledged once handled and a repeated
// event creates nothing; a disconnect is followed by a new connection; the Events API route
// verifies Slack's signature, answers the challenge and drops retries; token, rate-limit and
// refusal failures are the breaker's.
import { describe, expect, it } from 'vitest';
import { quickBreaker } from '../helpers/chat-platforms.js';
import { slackSign } from '../../src/platforms/slack-signature.js';
import { api, startGateway } from '../helpers/app.js';
import { slackDouble, type SlackDouble } from '../helpers/slack-double.js';
import { waitFor } from '../helpers/wait.js';
import { profile } from '../helpers/workers.js';

function slack(sl: SlackDouble, options: object = {}, extra: object = {}) {
  return {
    name: 'sl',
    type: 'slack',
    options: { botToken: sl.botToken, apiBase: sl.url, ...options },
    breaker: quickBreaker,
    ...extra,
  };
}

async function view(url: string) {
  return (await api(url, 'GET', '/platform/sl')).body;
}

const working = {
  tickSeconds: 0.1,
  defaultProfile: 'ok',
  profiles: { ok: profile('complete') },
};

describe('slack over Socket Mode', () => {
  it('creates a task from /task, acknowledges the envelope, and tells the channel it is done', async () => {
    const sl = await slackDouble();
    const gw = await startGateway(
      { workers: working, platforms: [slack(sl, { appToken: sl.appToken })] },
      { dispatch: true },
    );
    await waitFor('connected', async () => (await view(gw.url)).state === 'connected');
    const said = sl.say('C42', '/task write the release notes');
    sl.say('C42', '/task from a bot', true);
    await waitFor('the reply', () => sl.posted.find((m) => m.text.startsWith('Created t_')));
    const done = await waitFor('the done notice', () =>
      sl.posted.find((m) => m.text.startsWith('Task ')),
    );
    expect(done.channel).toBe('C42');
    expect(done.text).toMatch(/^Task t_[0-9a-f]{12} "write the release notes" is done: all done$/);
    await waitFor('acknowledged', () => sl.acked.has(said));
    expect((await gw.kanban.board.list({ limit: 10 })).tasks.map((t) => t.title)).toEqual([
      'write the release notes',
    ]);
  });

  it('takes an event sent twice once, and opens a new connection when Slack asks or the link drops', async () => {
    const sl = await slackDouble();
    const gw = await startGateway({
      workers: { maxConcurrent: 0 },
      platforms: [slack(sl, { appToken: sl.appToken })],
    });
    await waitFor('connected', async () => (await view(gw.url)).state === 'connected');
    sl.repeatEach = true;
    for (let i = 0; i < 5; i++) sl.say('C1', `/task first ${i}`);
    await waitFor('the first tasks', async () => (await gw.kanban.board.counts()).ready === 5);
    sl.disconnect();
    await waitFor('connected again', () => sl.connections === 2, 15_000);
    for (let i = 0; i < 5; i++) sl.say('C1', `/task second ${i}`);
    await waitFor('every one acknowledged', () => sl.acked.size === 10);
    // Cut without a word: what comes meanwhile is sent again on the next connection.
    sl.drop();
    for (let i = 0; i < 5; i++) sl.say('C1', `/task third ${i}`);
    await waitFor('connected a third time', () => sl.connections === 3, 15_000);
    await waitFor('every one acknowledged', () => sl.acked.size === 15);
    expect((await gw.kanban.board.counts()).ready).toBe(15);
  });

  it('treats a revoked token as permanent (failed), waits out a rate limit, and drops a refused notice', async () => {
    const bad = await slackDouble();
    bad.mode = 'unauthorized';
    const failed = await startGateway({ platforms: [slack(bad)] });
    await waitFor('failed', async () => (await view(failed.url)).state === 'failed');
    expect((await view(failed.url)).breaker.lastError).toContain('invalid_auth');

    const sl = await slackDouble();
    const gw = await startGateway(
      { workers: working, platforms: [slack(sl, {}, { homeChannel: 'CHOME' })] },
      { dispatch: true, notifyRetryMs: 200 },
    );
    await waitFor('connected', async () => (await view(gw.url)).state === 'connected');
    sl.mode = 'limited';
    const id = (await api(gw.url, 'POST', '/tasks', { title: 'rate limited' })).body.id;
    await waitFor('a post refused for the rate', () => sl.calls.includes('chat.postMessage'));
    sl.mode = 'ok';
    await waitFor('the notice', () => sl.posted.some((m) => m.text.includes(id)), 15_000);
    const notices = sl.posted.filter((m) => m.text.includes(id));
    expect(notices).toHaveLength(1);
    // Not before the second Slack's Retry-After asked for.
    expect(notices[0]!.at - sl.limitedAt).toBeGreaterThanOrEqual(1000);

    sl.refuseChannels.add('CHOME');
    const refused = (await api(gw.url, 'POST', '/tasks', { title: 'refused' })).body.id;
    await waitFor('dropped', async () => {
      const events = (await api(gw.url, 'GET', `/tasks/${refused}/events`)).body.events;
      return events.some((e: { kind: string }) => e.kind === 'notification_dropped');
    });
    sl.refuseChannels.clear();
    const later = (await api(gw.url, 'POST', '/tasks', { title: 'later' })).body.id;
    await waitFor('the later notice', () => sl.posted.some((m) => m.text.includes(later)));
  });
});

describe("slack's Events API", () => {
  it('answers the challenge, takes a signed message once whatever Slack retries, and refuses what Slack did not sign', async () => {
    const sl = await slackDouble();
    const gw = await startGateway({
      workers: { maxConcurrent: 0 },
      platforms: [slack(sl, { signingSecret: sl.signingSecret })],
    });
    const post = (body: string, headers: Record<string, string>) =>
      api(gw.url, 'POST', '/platform/sl/events', body, headers);

    const challenge = JSON.stringify({ type: 'url_verification', challenge: 'c-123', token: 't' });
    const signed = sl.signedEvent('C1', 'x', 'Ev1');
    const timestamp = signed.headers['x-slack-request-timestamp']!;
    const verify = await post(challenge, {
      ...signed.headers,
      'x-slack-signature': slackSign(sl.signingSecret, timestamp, challenge),
    });
    expect(verify.status).toBe(200);
    expect(verify.body).toEqual({ challenge: 'c-123' });

    const first = sl.signedEvent('C1', '/task from the events api', 'Ev100');
    const taken = await post(first.body, first.headers);
    expect(taken.status).toBe(200);
    expect(taken.body.duplicate).toBe(false);
    const again = await post(first.body, { ...first.headers, 'x-slack-retry-num': '1' });
    expect(again.body).toEqual({ duplicate: true, taskId: taken.body.taskId });

    const stale = sl.signedEvent('C1', '/task stale', 'Ev101', Math.floor(Date.now() / 1000) - 600);
    expect((await post(stale.body, stale.headers)).status).toBe(401);
    const forged = sl.signedEvent('C1', '/task forged', 'Ev102');
    const tampered = await post(forged.body.replace('forged', 'forget'), forged.headers);
    expect(tampered.status).toBe(401);
    expect(tampered.body.error.message).toContain('x-slack-signature');
    expect((await gw.kanban.board.list({ limit: 10 })).tasks.map((t) => t.title)).toEqual([
      'from the events api',
    ]);
    await waitFor('the reply', () => sl.posted.some((m) => m.text.startsWith('Created t_')));
    // A platform that is not Slack takes no Slack events.
    expect(
      (await api(gw.url, 'POST', '/platform/nope/events', first.body, first.headers)).status,
    ).toBe(404);
  });
});
