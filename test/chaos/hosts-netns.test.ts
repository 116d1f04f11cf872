// Two hosts, each a daemon in a network namespace of its own, one PostgreSQL: the first host is
// cut off from the database (its link set down) while its worker runs. The process table is
// sampled throughout: the cut-off host's worker is ended before its lease runs out, the second
// host takes the task over, and there is never more than one live worker for it. Healed, the
// first host comes back by itself as a new host, with nothing restarting it.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startCluster } from '../../scripts/pg-cluster.mjs';
import { api } from '../helpers/app.js';
import { cleanEnv, gatehouseArgs, tempDir, writeConfig } from '../helpers/daemon.js';
import { liveRunsOf, namespaceHost } from '../helpers/netns.js';
import { spawnTracked, type Spawned } from '../helpers/procs.js';
import { waitFor } from '../helpers/wait.js';
import { profile } from '../helpers/workers.js';

const TOKEN = 'a-netns-api-token-of-the-test';
const auth = { authorization: `Bearer ${TOKEN}` };

describe('hosts in network namespaces on one PostgreSQL', () => {
  it('ends a cut-off host’s worker before its lease runs out; another host runs the task, never beside it', async () => {
    const cluster = await startCluster({ network: '10.213.0.0/16' });
    if (cluster.missing !== undefined) throw new Error(cluster.missing);
    const tag = randomBytes(3).toString('hex');
    const hosts: ReturnType<typeof namespaceHost>[] = [];
    const daemons: Spawned[] = [];
    let sampling: NodeJS.Timeout | undefined;
    try {
      const port = new URL(cluster.url).port;
      hosts.push(namespaceHost(tag, 1), namespaceHost(tag, 2));
      const start = (i: number) => {
        const host = hosts[i]!;
        const dataDir = tempDir();
        const config = writeConfig(dataDir, {
          server: { host: host.address },
          api: { token: TOKEN },
          store: {
            kind: 'postgres',
            url: `postgres://gatehouse@${host.gateway}:${port}/postgres`,
            schema: 'gatehouse',
          },
          cluster: {
            hostName: `host-${i + 1}`,
            leaseSeconds: 10,
            renewSeconds: 1,
            reclaimGraceSeconds: 1,
          },
          workers: {
            tickSeconds: 0.2,
            killGraceSeconds: 1,
            // A profile only host-1 has: a task for it shows host-1 claiming again.
            profiles: { hang: profile('hang'), ...(i === 0 ? { 'only-1': profile('hang') } : {}) },
            defaultProfile: 'hang',
          },
        });
        const daemon = spawnTracked(
          [
            'ip',
            'netns',
            'exec',
            host.ns,
            ...gatehouseArgs('run', { dataDir, config }),
            '--port',
            // Each namespace has ports of its own.
            '7400',
          ],
          { env: cleanEnv() },
        );
        daemons.push(daemon);
        return { daemon, base: `http://${host.address}:7400` };
      };
      const ready = ({ base, daemon }: { base: string; daemon: Spawned }) =>
        waitFor(
          `${base} to be ready`,
          async () => {
            if (daemon.child.exitCode !== null) throw new Error(`it exited: ${daemon.output()}`);
            const res = await api(base, 'GET', '/ready', undefined, auth).catch(() => null);
            return res?.status === 200;
          },
          60_000,
        );

      const first = start(0);
      await ready(first);
      const { id } = (await api(first.base, 'POST', '/tasks', { title: 'long' }, auth)).body;
      await waitFor('a worker', () => liveRunsOf(id).size === 1, 20_000);
      const [firstRun] = liveRunsOf(id);

      let most = 0;
      let firstGoneAt: number | null = null;
      sampling = setInterval(() => {
        const live = liveRunsOf(id);
        most = Math.max(most, live.size);
        if (firstGoneAt === null && !live.has(firstRun!)) firstGoneAt = Date.now();
      }, 50);

      hosts[0]!.cut();
      const second = start(1);
      await ready(second);
      const [hostOne] = (await api(second.base, 'GET', '/hosts', undefined, auth)).body.hosts;
      const detail = await waitFor(
        'the task running on host-2',
        async () => {
          const t = (await api(second.base, 'GET', `/tasks/${id}`, undefined, auth)).body;
          return t.runs.length === 2 && t.runs[1].pid > 0 ? t : null;
        },
        60_000,
      );
      await waitFor('host-2’s worker', () => liveRunsOf(id).size === 1, 10_000);
      clearInterval(sampling);

      expect(most).toBe(1);
      expect(firstGoneAt).not.toBeNull();
      // Ended by its own host's run wrapper, before that host's lease ran out (one clock here).
      expect(firstGoneAt!).toBeLessThan(hostOne.leaseExpiresAt);
      expect(detail.runs[0]).toMatchObject({ id: firstRun, outcome: 'lost', host: 'host-1' });
      expect(detail.runs[1]).toMatchObject({ host: 'host-2', endedAt: null });
      const hostsNow = (await api(second.base, 'GET', '/hosts', undefined, auth)).body.hosts;
      expect(hostsNow.map((h: { name: string; state: string }) => [h.name, h.state])).toEqual([
        ['host-1', 'dead'],
        ['host-2', 'active'],
      ]);

      // While cut off, it says what it is doing (read from inside its namespace).
      const cutOff = JSON.parse(
        execFileSync(
          'ip',
          [
            'netns',
            'exec',
            hosts[0]!.ns,
            'curl',
            '-s',
            `${first.base}/ready`,
            '-H',
            `authorization: Bearer ${TOKEN}`,
          ],
          { encoding: 'utf8' },
        ),
      );
      expect(cutOff.ready).toBe(false);
      expect(cutOff.subsystems.host.status).not.toBe('ok');

      // Reconnected, the first daemon finds its lease gone and comes back by itself, in the same
      // process, as a new host: nothing restarts it.
      hosts[0]!.mend();
      const healed = Date.now();
      await waitFor(
        'host-1 serving again',
        async () => {
          if (daemons[0]!.child.exitCode !== null)
            throw new Error(`it exited: ${daemons[0]!.output()}`);
          const res = await api(first.base, 'GET', '/ready', undefined, auth).catch(() => null);
          return res?.status === 200 && res.body.subsystems.host.status === 'ok';
        },
        30_000,
      );
      const backAfter = Date.now() - healed;
      console.log(
        `hosts-netns: host-1 served the board again ${backAfter} ms after the cut healed`,
      );
      const rejoined = (await api(second.base, 'GET', '/hosts', undefined, auth)).body.hosts;
      expect(rejoined.map((h: { name: string; state: string }) => [h.name, h.state])).toEqual([
        ['host-1', 'dead'],
        ['host-2', 'active'],
        ['host-1', 'active'],
      ]);
      expect(backAfter).toBeLessThan(15_000);
      expect(daemons[0]!.child.exitCode).toBeNull();
      expect([...liveRunsOf(id)]).toEqual([detail.runs[1].id]);
      // It claims again: a task only it can run runs there.
      const only = (
        await api(second.base, 'POST', '/tasks', { title: 'on host-1', assignee: 'only-1' }, auth)
      ).body;
      const onFirst = await waitFor(
        'a run on host-1',
        async () => {
          const t = (await api(second.base, 'GET', `/tasks/${only.id}`, undefined, auth)).body;
          return t.runs?.[0]?.pid > 0 ? t.runs[0] : null;
        },
        20_000,
      );
      expect(onFirst.host).toBe('host-1');
      await api(second.base, 'POST', `/tasks/${id}/archive`, undefined, auth);
    } finally {
      clearInterval(sampling);
      for (const d of daemons) d.child.kill('SIGTERM');
      await Promise.all(daemons.map((d) => d.exited));
      for (const h of hosts) h.remove();
      cluster.stop();
    }
  });
});
