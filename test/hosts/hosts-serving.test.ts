// Three real daemons serving one PostgreSQL board at once: every task runs once, on whichever
// host claims it; every host's websocket streams every host's events in one order; a task
// assigned a profile only one host runs is taken by every host and runs there; and an archive
// through one host ends the worker another host runs.
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { currentBootId, pidExists } from '../../src/proc/index.js';
import { api } from '../helpers/app.js';
import { startHosts, stopHosts, type TestHost } from '../helpers/hosts.js';
import { waitFor } from '../helpers/wait.js';
import { profile } from '../helpers/workers.js';

const NAMES = ['alpha', 'beta', 'gamma'];

/** Every event id a websocket of `base` delivers from the start of the log. */
function stream(base: string): { ids: number[]; close: () => void } {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/events/stream?after=0`);
  const ids: number[] = [];
  ws.on('message', (data: Buffer) => ids.push(JSON.parse(data.toString('utf8')).id));
  ws.on('error', () => undefined);
  return { ids, close: () => ws.close() };
}

/** The whole event log's ids, read page by page. */
async function logIds(base: string): Promise<number[]> {
  const ids: number[] = [];
  for (;;) {
    const after = ids.at(-1) ?? 0;
    const page = (await api(base, 'GET', `/events?after=${after}&limit=1000`)).body.events;
    ids.push(...page.map((e: { id: number }) => e.id));
    if (page.length < 1000) return ids;
  }
}

/** Three hosts: every one runs `done`; only the last one runs `lonely`. */
function startThree(): Promise<TestHost[]> {
  return startHosts(NAMES, (_name, i) => ({
    workers: {
      tickSeconds: 0.2,
      killGraceSeconds: 1,
      maxConcurrent: 4,
      profiles: {
        done: profile('complete'),
        ...(i === NAMES.length - 1 ? { lonely: profile('hang') } : {}),
      },
      defaultProfile: 'done',
    },
  }));
}

describe('hosts serving one board on PostgreSQL at once', () => {
  it('runs each task once on whichever host claims it, and every host streams every event in one order', async () => {
    const hosts = await startThree();
    const streams = hosts.map((h) => stream(h.base));
    try {
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) {
        const via = hosts[i % hosts.length]!;
        const res = await api(via.base, 'POST', '/tasks', { title: `task ${i}` });
        expect(res.status).toBe(201);
        ids.push(res.body.id);
      }
      const done = await waitFor('every task done', async () => {
        const tasks = await Promise.all(
          ids.map(async (id) => (await api(hosts[0]!.base, 'GET', `/tasks/${id}`)).body),
        );
        return tasks.every((t) => t.status === 'done' && t.runs.every((r: any) => r.endedAt))
          ? tasks
          : null;
      });
      for (const task of done) {
        expect(task.runs).toHaveLength(1);
        expect(task.runs[0].outcome).toBe('completed');
      }
      const ranOn = new Set(done.map((t) => t.runs[0].host));
      expect(ranOn.size).toBeGreaterThan(1);
      for (const name of ranOn) expect(NAMES).toContain(name);

      const log = await logIds(hosts[1]!.base);
      for (let i = 1; i < log.length; i++) expect(log[i]).toBe(log[i - 1]! + 1);
      await waitFor('every stream at the end of the log', () =>
        streams.every((s) => s.ids.at(-1)! >= log.at(-1)!),
      );
      for (const s of streams) expect(s.ids.slice(0, log.length)).toEqual(log);
    } finally {
      for (const s of streams) s.close();
      await stopHosts(hosts);
    }
  });

  it('takes a task for a profile only one host runs on any host, runs it there, and ends it through another host', async () => {
    const hosts = await startThree();
    const [alpha, beta, gamma] = hosts as [TestHost, TestHost, TestHost];
    const refused = await api(alpha.base, 'POST', '/tasks', { title: 'x', assignee: 'nobody' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('lonely');

    const { id } = (await api(alpha.base, 'POST', '/tasks', { title: 'y', assignee: 'lonely' }))
      .body;
    const run = await waitFor('its worker', async () => {
      const [r] = (await api(beta.base, 'GET', `/tasks/${id}`)).body.runs;
      return r?.pid > 0 ? r : null;
    });
    expect(run.host).toBe(gamma.name);
    const worker = { pid: run.pid, startTime: run.startTime, bootId: currentBootId() };
    expect(pidExists(worker.pid, worker)).toBe(true);

    const archived = await api(beta.base, 'POST', `/tasks/${id}/archive`);
    expect(archived.status).toBe(200);
    expect(archived.body.status).toBe('archived');
    const [ended] = (await api(alpha.base, 'GET', `/tasks/${id}`)).body.runs;
    expect(ended.outcome).toBe('archived');
    await waitFor('the worker gone', () => !pidExists(worker.pid, worker), 10_000);
    await stopHosts(hosts);
  });
});
