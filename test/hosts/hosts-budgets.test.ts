// A profile's daily budget across two real daemons on one PostgreSQL board (docs/budgets.md): what
// one host's runs spent holds the profile on every host until the next UTC day.
import { describe, expect, it } from 'vitest';
import { api } from '../helpers/app.js';
import { ENDS_AGENTS, claudeProfile } from '../helpers/agents.js';
import { startHosts, stopHosts } from '../helpers/hosts.js';
import { anthropicDouble } from '../helpers/model-doubles.js';
import { waitFor } from '../helpers/wait.js';

describe('a daily budget on two hosts', () => {
  it('is spent by one host’s run and holds the profile on both until the next UTC day', async () => {
    const double = await anthropicDouble();
    double.script = () => ({ text: 'done', usage: { input: 120, output: 30 } });
    // Unsandboxed: the API then needs no token of the daemon's own making (docs/sandbox.md).
    const claude = claudeProfile(
      double,
      {},
      { dailyBudget: { tokens: 100 }, sandbox: { kind: 'none' } },
    );
    const hosts = await startHosts(['alpha', 'beta'], () => ({
      ...ENDS_AGENTS,
      workers: { tickSeconds: 0.2, defaultProfile: 'claude', profiles: { claude } },
    }));
    try {
      const [alpha, beta] = hosts as [(typeof hosts)[0], (typeof hosts)[0]];
      const first = (await api(alpha.base, 'POST', '/tasks', { title: 'first' })).body;
      await waitFor(
        'the first task done',
        async () => {
          const t = (await api(beta.base, 'GET', `/tasks/${first.id}`)).body;
          return t.status === 'done' ? t : null;
        },
        60_000,
      );
      const second = (await api(beta.base, 'POST', '/tasks', { title: 'second' })).body;
      const held = await waitFor(
        'the profile held',
        async () => {
          const { events } = (await api(alpha.base, 'GET', `/tasks/${second.id}/events`)).body;
          return events.find((e: { kind: string }) => e.kind === 'profile_held') ?? null;
        },
        30_000,
      );
      const midnight = Math.floor(Date.now() / 86_400_000 + 1) * 86_400_000;
      expect(held.payload).toEqual({ profile: 'claude', until: midnight, reason: 'daily budget' });
      for (const host of hosts) {
        const workers = (await api(host.base, 'GET', '/workers')).body;
        expect(workers.holds).toEqual([
          expect.objectContaining({ profile: 'claude', until: midnight, reason: 'daily budget' }),
        ]);
        const metrics = (await api(host.base, 'GET', '/metrics')).body as string;
        expect(metrics).toContain(
          'gatehouse_profile_spend_today{profile="claude",unit="tokens"} 150',
        );
      }
      expect((await api(alpha.base, 'GET', `/tasks/${second.id}`)).body).toMatchObject({
        status: 'ready',
        runs: [],
      });
    } finally {
      await stopHosts(hosts);
    }
  }, 120_000);
});
