// A chat platform across hosts: three daemons share a board and a Telegram bot (played by a
// local server following the Bot API); one host at a time polls it, and when that host is
// killed another takes the platform over. Every message creates its task once, and every chat
// hears once that its task is done, across the failover.
import { describe, expect, it } from 'vitest';
import { api } from '../helpers/app.js';
import { telegramDouble } from '../helpers/doubles.js';
import { startHosts, stopHosts, type TestHost } from '../helpers/hosts.js';
import { waitFor } from '../helpers/wait.js';
import { profile } from '../helpers/workers.js';

async function stateOn(host: TestHost): Promise<string> {
  return (await api(host.base, 'GET', '/platform/tg')).body.state;
}

/** The one host whose adapter is connected, once the others stand by. */
async function holder(hosts: readonly TestHost[], timeoutMs = 30_000): Promise<TestHost> {
  return waitFor(
    'one host connected, the others standing by',
    async () => {
      const states = await Promise.all(hosts.map(stateOn));
      const connected = hosts.filter((_, i) => states[i] === 'connected');
      return connected.length === 1 &&
        states.filter((s) => s === 'standby').length === hosts.length - 1
        ? connected[0]!
        : null;
    },
    timeoutMs,
  );
}

describe('a platform shared by hosts', () => {
  it('is polled by one host at a time, taken over when it dies, every message one task and every notice sent once', async () => {
    const tg = await telegramDouble();
    const hosts = await startHosts(['alpha', 'beta', 'gamma'], () => ({
      workers: {
        tickSeconds: 0.2,
        killGraceSeconds: 1,
        profiles: { done: profile('complete') },
        defaultProfile: 'done',
      },
      platforms: [
        {
          name: 'tg',
          type: 'telegram',
          options: { token: tg.token, apiBase: tg.url, pollTimeoutSeconds: 1 },
        },
      ],
    }));
    try {
      const first = await holder(hosts);
      // An operator's hand on the platform belongs to its holder.
      const other = hosts.find((h) => h !== first)!;
      const refused = await api(other.base, 'POST', '/platform/tg/pause');
      expect(refused.status).toBe(503);
      expect(refused.body.error.message).toContain('another host');

      for (let i = 0; i < 20; i++) tg.say(100 + i, `/task before-${i}`);
      // Killed once its sends are over: a send cut off by a kill may be repeated by the next
      // holder (Telegram takes no idempotency key); what is tested here is the takeover.
      await waitFor('the first tasks created and told done', () =>
        Array.from({ length: 20 }, (_, i) => String(100 + i)).every(
          (chat) => tg.sent.filter((m) => m.chat_id === chat).length === 2,
        ),
      );
      await waitFor('their cursors recorded', async () => {
        const metrics = (await api(first.base, 'GET', '/metrics')).body as string;
        return /^gatehouse_notification_backlog 0$/m.test(metrics);
      });
      first.daemon.child.kill('SIGKILL');
      await first.daemon.exited;
      for (let i = 0; i < 20; i++) tg.say(200 + i, `/task after-${i}`);
      const rest = hosts.filter((h) => h !== first);
      const second = await holder(rest, 40_000);
      expect(second).not.toBe(first);

      const titles = [
        ...Array.from({ length: 20 }, (_, i) => `before-${i}`),
        ...Array.from({ length: 20 }, (_, i) => `after-${i}`),
      ];
      const tasks = await waitFor(
        'every task done',
        async () => {
          const all = (await api(second.base, 'GET', '/tasks?limit=200')).body.tasks;
          const done = all.filter((t: { status: string }) => t.status === 'done');
          return done.length >= titles.length ? all : null;
        },
        60_000,
      );
      expect(tasks.map((t: { title: string }) => t.title).sort()).toEqual([...titles].sort());
      // Each chat: its reply, then its notice, once each.
      await waitFor('every notice', () =>
        titles.every((_, i) => {
          const chat = String(i < 20 ? 100 + i : 200 + i - 20);
          return tg.sent.filter((m) => m.chat_id === chat && m.text.includes('is done')).length;
        }),
      );
      for (let i = 0; i < 40; i++) {
        const chat = String(i < 20 ? 100 + i : 200 + i - 20);
        const to = tg.sent.filter((m) => m.chat_id === chat);
        expect(to.filter((m) => m.text.startsWith('Created')).length).toBe(1);
        expect([chat, to.filter((m) => m.text.includes('is done')).length]).toEqual([chat, 1]);
      }
    } finally {
      await stopHosts(hosts);
    }
  }, 120_000);
});
