// Idempotency-Key across three real daemons on one PostgreSQL board: twins of one request sent
// to every host at once make one task, and every host answers with it.
import { describe, expect, it } from 'vitest';
import { api } from '../helpers/app.js';
import { startHosts, stopHosts } from '../helpers/hosts.js';

describe('Idempotency-Key across hosts', () => {
  it('makes one task of 20 twins spread over three hosts, each answered with it', async () => {
    const hosts = await startHosts(['alpha', 'beta', 'gamma'], () => ({
      workers: { maxConcurrent: 0 },
    }));
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          api(
            hosts[i % 3]!.base,
            'POST',
            '/tasks',
            { title: 'once, anywhere' },
            {
              'idempotency-key': 'across-hosts',
            },
          ),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(201));
      expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
      const replayed = answers.filter((a) => a.headers.get('idempotent-replayed') === 'true');
      expect(replayed).toHaveLength(19);
      for (const host of hosts) {
        const { tasks } = (await api(host.base, 'GET', '/tasks')).body;
        expect(tasks.map((t: { id: string }) => t.id)).toEqual([answers[0]!.body.id]);
      }
    } finally {
      await stopHosts(hosts);
    }
  });
});
