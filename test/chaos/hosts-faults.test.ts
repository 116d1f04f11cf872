// Three hosts, each a daemon in a network namespace of its own, serve one PostgreSQL board while
// tasks keep coming, and faults are dealt in a seeded random order: a host cut off the database,
// a daemon frozen, a daemon killed, a whole host killed (daemon and workers), the database
// restarted, the listening connections killed. The process table of every host is sampled
// throughout. Afterwards: never two live workers for one task, never two completions recorded
// for one task, and every task done (nothing lost). `GH_HOSTS_TRIALS` deals more faults.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startCluster } from '../../scripts/pg-cluster.mjs';
import { cleanEnv, gatehouseArgs, tempDir, writeConfig } from '../helpers/daemon.js';
import { liveWorkers, namespaceHost, type NamespaceHost } from '../helpers/netns.js';
import { spawnTracked, type Spawned } from '../helpers/procs.js';
import { waitFor } from '../helpers/wait.js';
import { prng } from './interleave.js';

const TOKEN = 'a-netns-api-token-of-the-test';
const auth = { authorization: `Bearer ${TOKEN}` };
const LEASE_S = 8;
const HOSTS = 3;
/** `npm run soak:hosts`: faults are dealt for this many minutes (at least `trials` of them). */
const minutes = Number(process.env.GH_HOSTS_MINUTES ?? 0);
const seed = Number(process.env.GH_HOSTS_SEED ?? 20261201);

/** A worker of 1.5 s that reports done; each host also runs a profile no other host has. */
const WORK = [
  '/bin/sh',
  '-c',
  `sleep 1.5; printf '{"status":"done"}' > "$GATEHOUSE_RUN_DIR/result.json"`,
];

type Fault =
  | 'cut'
  | 'freeze'
  | 'kill'
  | 'kill-host'
  | 'restart-db'
  | 'kill-listeners'
  | 'kill-wrappers'
  | 'forge-fence'
  | 'lock-table'
  | 'clock-step';
const FAULTS: Fault[] = [
  'cut',
  'freeze',
  'kill',
  'kill-host',
  'restart-db',
  'kill-listeners',
  'kill-wrappers',
  'forge-fence',
  'lock-table',
  'clock-step',
];
/** Faults dealt at least (GH_HOSTS_TRIALS): by default each kind once. */
const trials = Number(process.env.GH_HOSTS_TRIALS ?? FAULTS.length);

interface Host {
  n: number;
  net: NamespaceHost;
  dataDir: string;
  config: string;
  base: string;
  daemon: Spawned | null;
  /** Under a fault: not asked anything meanwhile. */
  down: boolean;
  /** The offset of its wall clock (libfaketime's file): stepped by the clock-step fault. */
  clock: string;
}

/** libfaketime (Debian's faketime): every process of a host daemon reads its clock's offset. */
const FAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

/** A request that gives up after 3 s (a frozen daemon answers nothing). */
async function call(base: string, method: string, path: string, body?: object) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...auth, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(3000),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('three hosts on one PostgreSQL under faults', () => {
  it(
    'never runs a task on two hosts at once, never records it done twice, and loses none',
    async () => {
      const cluster = await startCluster({ network: '10.213.0.0/16' });
      if (cluster.missing !== undefined) throw new Error(cluster.missing);
      const port = new URL(cluster.url).port;
      const tag = randomBytes(3).toString('hex');
      const hosts: Host[] = [];
      const created: string[] = [];
      const violations: string[] = [];
      /** Said at once too: a long soak that ends another way still shows what it found. */
      const violate = (what: string) => {
        violations.push(what);
        console.log(`VIOLATION ${what}`);
      };
      const live = new Map<string, Set<string>>();
      let samples = 0;
      let sampling: NodeJS.Timeout | undefined;
      let feeding = true;
      const admin = new pg.Pool({ connectionString: cluster.url, max: 1 });
      // Its idle connection is ended too when the database restarts.
      admin.on('error', () => undefined);
      const random = prng(seed);
      const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
      const listenerClaims: number[] = [];
      const dealt: Fault[] = [];

      const start = async (host: Host) => {
        host.daemon = spawnTracked(
          [
            'ip',
            'netns',
            'exec',
            host.net.ns,
            ...gatehouseArgs('run', { dataDir: host.dataDir, config: host.config }),
            '--port',
            '7400',
          ],
          {
            env: {
              ...cleanEnv(),
              // Its wall clock steps when the test says; timers and the boot clock do not.
              LD_PRELOAD: FAKETIME,
              FAKETIME_TIMESTAMP_FILE: host.clock,
              FAKETIME_CACHE_DURATION: '1',
              DONT_FAKE_MONOTONIC: '1',
            },
          },
        );
        const daemon = host.daemon;
        await waitFor(
          `host-${host.n} ready`,
          async () => {
            if (daemon.child.exitCode !== null) throw new Error(`it exited: ${daemon.output()}`);
            const res = await call(host.base, 'GET', '/ready').catch(() => null);
            return res?.status === 200;
          },
          60_000,
        );
      };
      const stop = async (host: Host, signal: NodeJS.Signals) => {
        host.daemon?.child.kill(signal);
        await host.daemon?.exited;
        host.daemon = null;
      };
      const serving = () => hosts.filter((h) => h.daemon !== null && !h.down);
      const post = async (body: object) => {
        for (const host of [...serving()].sort(() => Math.random() - 0.5)) {
          const res = await call(host.base, 'POST', '/tasks', body).catch(() => null);
          if (res?.status === 201) return res.body.id as string;
        }
        return null;
      };
      /**
       * A daemon that lost its lease (cut off, frozen) comes back by itself, in the same process:
       * ready again within 15 s of the fault's end, or it is a finding.
       */
      const backBySelf = async (host: Host) => {
        const daemon = host.daemon!;
        const healed = Date.now();
        const back = await waitFor(
          `host-${host.n} to serve again`,
          async () => {
            if (daemon.child.exitCode !== null) return 'exited';
            const res = await call(host.base, 'GET', '/ready').catch(() => null);
            return res?.status === 200 ? 'ready' : null;
          },
          60_000,
        ).catch(() => 'not back');
        if (back !== 'ready') violate(`host-${host.n} did not come back by itself: ${back}`);
        else if (Date.now() - healed > 15_000)
          violate(`host-${host.n} came back ${Date.now() - healed} ms after the fault ended`);
      };

      /** A daemon that stopped by itself is a finding: said, with its last words, and started again. */
      const restartStopped = async () => {
        for (const h of hosts) {
          if (h.daemon && h.daemon.child.exitCode !== null) {
            violate(
              `host-${h.n} exited by itself (${h.daemon.child.exitCode}): ${h.daemon.output().slice(-1500)}`,
            );
            h.daemon = null;
            await start(h);
          }
        }
      };

      /** Its workers: the processes whose run folder is in its data dir, proven by identity. */
      const killWorkersOf = (host: Host) => {
        for (const w of liveWorkers()) {
          if (!w.runDir.startsWith(`${host.dataDir}/`)) continue;
          try {
            const stat = readFileSync(`/proc/${w.pid}/stat`, 'utf8');
            if (stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] === w.startTime)
              process.kill(w.pid, 'SIGKILL');
          } catch {
            // it ended by itself meanwhile
          }
        }
      };

      const faults: Record<Fault, (host: Host) => Promise<void>> = {
        cut: async (host) => {
          host.net.cut();
          await new Promise((r) => setTimeout(r, (LEASE_S + 2) * 1000));
          host.net.mend();
          await backBySelf(host);
        },
        freeze: async (host) => {
          host.daemon!.child.kill('SIGSTOP');
          await new Promise((r) => setTimeout(r, (LEASE_S + 2) * 1000));
          host.daemon!.child.kill('SIGCONT');
          await backBySelf(host);
        },
        kill: async (host) => {
          // Restarted within its lease: it adopts its workers.
          await stop(host, 'SIGKILL');
          await start(host);
        },
        'kill-host': async (host) => {
          await stop(host, 'SIGKILL');
          killWorkersOf(host);
          await start(host);
        },
        'kill-wrappers': async (host) => {
          // Its daemon frozen, every run's wrapper and worker killed whole (an OOM kill, an
          // operator's kill -- -PGID): the runs must still end once, and no task run twice.
          host.daemon!.child.kill('SIGSTOP');
          killWorkersOf(host);
          await new Promise((r) => setTimeout(r, (LEASE_S + 2) * 1000));
          host.daemon!.child.kill('SIGCONT');
          await backBySelf(host);
        },
        'forge-fence': async (host) => {
          // What a worker could write to the fence of older versions; this one's keeper reads no file.
          writeFileSync(join(host.dataDir, 'fence'), '9999999999 9999999999\n');
          host.daemon!.child.kill('SIGSTOP');
          await new Promise((r) => setTimeout(r, (LEASE_S + 2) * 1000));
          host.daemon!.child.kill('SIGCONT');
          await backBySelf(host);
        },
        'clock-step': async (host) => {
          // NTP steps: back a minute while its daemon is frozen (the fence must not move past
          // the lease), then forward two minutes while it serves (nothing may be ended for it).
          host.daemon!.child.kill('SIGSTOP');
          writeFileSync(host.clock, '-60s\n');
          await new Promise((r) => setTimeout(r, (LEASE_S + 2) * 1000));
          host.daemon!.child.kill('SIGCONT');
          await backBySelf(host);
          writeFileSync(host.clock, '+120s\n');
          await new Promise((r) => setTimeout(r, (LEASE_S + 2) * 1000));
          const ready = await call(host.base, 'GET', '/ready').catch(() => null);
          if (ready?.status !== 200) violate(`host-${host.n} not ready after a forward clock step`);
          writeFileSync(host.clock, '+0\n');
        },
        'lock-table': async () => {
          // An operator's LOCK TABLE while every host reads and renews: no lease may be lost.
          const client = await admin.connect();
          try {
            await client.query('BEGIN');
            await client.query('LOCK TABLE gatehouse.tasks IN ACCESS EXCLUSIVE MODE');
            await new Promise((r) => setTimeout(r, 8000));
            await client.query('COMMIT');
          } finally {
            client.release();
          }
          for (const h of serving()) {
            const ready = await call(h.base, 'GET', '/ready').catch(() => null);
            if (ready?.body?.subsystems?.host?.status === 'down')
              violate(`host-${h.n} lost its lease to a LOCK TABLE`);
          }
        },
        'restart-db': async () => {
          await cluster.restart();
        },
        'kill-listeners': async (host) => {
          await admin.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'gatehouse listen'",
          );
          // A task only another host runs, created here: that host must still hear of it.
          const other = pick(serving().filter((h) => h !== host));
          const t0 = Date.now();
          const res = await call(host.base, 'POST', '/tasks', {
            title: 'after the listeners died',
            assignee: `only-${other.n}`,
          });
          if (res.status !== 201) {
            violate(`create after killing the listeners: ${res.status}`);
            return;
          }
          created.push(res.body.id);
          await waitFor(
            'the claim',
            async () =>
              (await call(host.base, 'GET', `/tasks/${res.body.id}`)).body.runs.length > 0,
            15_000,
          );
          listenerClaims.push(Date.now() - t0);
        },
      };

      try {
        for (let n = 1; n <= HOSTS; n++) {
          const net = namespaceHost(tag, n);
          const dataDir = tempDir();
          const config = writeConfig(dataDir, {
            server: { host: net.address },
            api: { token: TOKEN },
            store: {
              kind: 'postgres',
              url: `postgres://gatehouse@${net.gateway}:${port}/postgres`,
              schema: 'gatehouse',
            },
            cluster: {
              hostName: `host-${n}`,
              leaseSeconds: LEASE_S,
              renewSeconds: 1,
              reclaimGraceSeconds: 1,
            },
            workers: {
              tickSeconds: 0.2,
              killGraceSeconds: 1,
              maxConcurrent: 3,
              // A task may be hit by several faults in a row: it must not be given up.
              failureLimit: 20,
              profiles: { work: { command: WORK }, [`only-${n}`]: { command: WORK } },
              defaultProfile: 'work',
            },
          });
          if (!existsSync(FAKETIME))
            throw new Error(`${FAKETIME} is missing: apt-get install faketime (.ci/run does)`);
          const clock = join(dataDir, 'clock-offset');
          writeFileSync(clock, '+0\n');
          hosts.push({
            clock,
            n,
            net,
            dataDir,
            config,
            base: `http://${net.address}:7400`,
            daemon: null,
            down: false,
          });
        }
        for (const host of hosts) await start(host);

        sampling = setInterval(() => {
          samples++;
          const now = new Map<string, Set<string>>();
          for (const w of liveWorkers()) {
            if (!now.has(w.taskId)) now.set(w.taskId, new Set());
            now.get(w.taskId)!.add(w.runId);
          }
          for (const [taskId, runs] of now) {
            if (runs.size > 1)
              violate(`task ${taskId}: runs ${[...runs].join(', ')} alive at once`);
            live.set(taskId, new Set([...(live.get(taskId) ?? []), ...runs]));
          }
        }, 50);
        const feeder = (async () => {
          while (feeding) {
            // At most 20 waiting: the hosts keep up, and a long soak ends with little to drain.
            const board = await call(pick(serving()).base, 'GET', '/ready')
              .then((r) => r.body.board as { ready: number })
              .catch(() => null);
            if (board && board.ready < 20) {
              const id = await post({ title: `work ${created.length}` });
              if (id) created.push(id);
            }
            await new Promise((r) => setTimeout(r, 150));
          }
        })();

        // Every fault once in a seeded order, then seeded picks.
        const order = [...FAULTS].sort(() => random() - 0.5);
        const until = Date.now() + minutes * 60_000;
        for (let i = 0; i < trials || Date.now() < until; i++) {
          await restartStopped();
          const fault = order[i] ?? pick(FAULTS);
          const host = pick(serving());
          console.log(`fault ${i + 1}: ${fault} on host-${host.n}`);
          dealt.push(fault);
          host.down = true;
          try {
            await faults[fault](host);
          } finally {
            host.down = false;
          }
        }
        feeding = false;
        await feeder;
        await restartStopped();

        let latest: any[] = [];
        const all = await waitFor(
          'every task done',
          async () => {
            const base = pick(serving()).base;
            // 50 at a time: a long soak creates more tasks than a daemon takes connections.
            const read: any[] = [];
            for (let i = 0; i < created.length; i += 50)
              read.push(
                ...(await Promise.all(
                  created
                    .slice(i, i + 50)
                    .map(async (id) => (await call(base, 'GET', `/tasks/${id}`)).body),
                )),
              );
            latest = read;
            return latest.every((t) => t.status === 'done') ? latest : null;
          },
          120_000,
        ).catch((err: unknown) => {
          const stuck = latest.filter((t) => t.status !== 'done');
          throw new Error(
            `${(err as Error).message}: ${stuck.length} not done, e.g. ${JSON.stringify(stuck.slice(0, 2), null, 1)}`,
          );
        });
        clearInterval(sampling);
        for (const task of all) {
          const completed = task.runs.filter((r: { outcome: string }) => r.outcome === 'completed');
          if (completed.length !== 1)
            violate(`task ${task.id}: ${completed.length} completed runs`);
        }
        const outcomes: Record<string, number> = {};
        for (const r of all.flatMap((t) => t.runs))
          outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
        console.log(
          `hosts under faults (seed ${seed}): ${dealt.length} faults ${JSON.stringify(Object.fromEntries(FAULTS.map((f) => [f, dealt.filter((d) => d === f).length])))}, ${created.length} tasks, ${all.flatMap((t) => t.runs).length} runs ${JSON.stringify(outcomes)}, ${samples} process-table samples; claims after the listeners died: ${listenerClaims.join(', ')} ms`,
        );
        expect(violations).toEqual([]);
      } finally {
        feeding = false;
        clearInterval(sampling);
        for (const h of hosts) {
          if (h.daemon) {
            h.daemon.child.kill('SIGCONT');
            h.daemon.child.kill('SIGTERM');
            await h.daemon.exited;
          }
        }
        await admin.end();
        for (const h of hosts) h.net.remove();
        cluster.stop();
      }
    },
    (trials * 30 + minutes * 60 + 240) * 1000,
  );
});
