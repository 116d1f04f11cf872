// Each chat platform's outage stays that platform's: while Matrix, Slack or Discord is down its
// breaker opens and its notices wait, the board runs tasks and the other platforms get theirs;
// once it is back the breaker closes and every notice arrives there exactly once.
import { describe, expect, it } from 'vitest';
import { quickBreaker, matrixOptions } from '../helpers/chat-platforms.js';
import { api, startGateway } from '../helpers/app.js';
import { discordDouble } from '../helpers/discord-double.js';
import { matrixDouble } from '../helpers/matrix-double.js';
import { slackDouble } from '../helpers/slack-double.js';
import { waitFor } from '../helpers/wait.js';
import { profile } from '../helpers/workers.js';

describe('an outage of one chat platform', () => {
  it('down or hanging, opens only its breaker, delays only its notices, and each arrives once when it is back', async () => {
    const mx = await matrixDouble();
    const sl = await slackDouble();
    const dc = await discordDouble();
    const home = { mx: '!home:example.org', sl: 'CHOME', dc: '999' };
    // A hanging call is cut at 2.5 s: on a loaded machine a stalled event loop could otherwise
    // cut a send the double had answered, and the notice would be sent again.
    const breaker = { ...quickBreaker, timeoutMs: 2500 };
    const gw = await startGateway(
      {
        workers: { tickSeconds: 0.1, defaultProfile: 'ok', profiles: { ok: profile('complete') } },
        platforms: [
          {
            name: 'mx',
            type: 'matrix',
            homeChannel: home.mx,
            options: matrixOptions(mx),
            breaker,
          },
          {
            name: 'sl',
            type: 'slack',
            homeChannel: home.sl,
            options: { botToken: sl.botToken, apiBase: sl.url },
            breaker,
          },
          {
            name: 'dc',
            type: 'discord',
            homeChannel: home.dc,
            options: { botToken: dc.token, apiBase: dc.url },
            breaker,
          },
        ],
      },
      { dispatch: true, notifyRetryMs: 200 },
    );
    const view = async (name: string) => (await api(gw.url, 'GET', `/platform/${name}`)).body;
    await waitFor('all connected', async () =>
      (await Promise.all(['mx', 'sl', 'dc'].map(view))).every((v) => v.state === 'connected'),
    );
    const told = {
      mx: (id: string) => mx.sent.filter((m) => m.body.includes(id)).length,
      sl: (id: string) => sl.posted.filter((m) => m.text.includes(id)).length,
      dc: (id: string) => dc.posted.filter((m) => m.content.includes(id)).length,
    };
    type Mode = 'ok' | 'down' | 'hang';
    const set = {
      mx: (mode: Mode) => (mx.mode = mode),
      sl: (mode: Mode) => (sl.mode = mode),
      dc: (mode: Mode) => (dc.mode = mode),
    };
    // Down (5xx) or hanging (no answer at all, each call cut by the breaker's timeout).
    const outages = [
      ['mx', 'down'],
      ['sl', 'hang'],
      ['dc', 'down'],
      ['mx', 'hang'],
      ['dc', 'hang'],
      ['sl', 'down'],
    ] as const;
    for (const [name, mode] of outages) {
      set[name](mode);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++)
        ids.push((await api(gw.url, 'POST', '/tasks', { title: `${name} ${mode} ${i}` })).body.id);
      const others = (['mx', 'sl', 'dc'] as const).filter((n) => n !== name);
      // The board and the other platforms carry on.
      await waitFor(`the others told while ${name} is down`, () => {
        const counts = others.map((o) => `${o}: ${ids.map((id) => told[o](id)).join(',')}`);
        if (ids.every((id) => others.every((o) => told[o](id) === 1))) return true;
        // What a timeout says: each other platform's count of each notice so far.
        throw new Error(counts.join('; '));
      });
      await waitFor(
        `${name}'s breaker open`,
        async () => (await view(name)).breaker.state === 'open',
      );
      expect(ids.map((id) => told[name](id))).toEqual([0, 0, 0]);
      for (const o of others) expect((await view(o)).breaker.state).toBe('closed');

      set[name]('ok');
      await waitFor(`${name}'s notices`, () => ids.every((id) => told[name](id) >= 1), 20_000);
      await waitFor(
        `${name}'s breaker closed`,
        async () => (await view(name)).breaker.state === 'closed',
      );
      expect(ids.map((id) => told[name](id))).toEqual([1, 1, 1]);
    }
    // Six outages, three of them hanging calls cut at 2.5 s each: longer than most tests.
  }, 120_000);
});
