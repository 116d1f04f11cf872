// Schedules (docs/schedules.md) on a clock the test moves: each firing made once, whichever host
// tries it and however often the daemon restarts around it; a missed firing made at start when it
// is less than a period old and skipped with an event when older; overlap "skip"; pause, resume
// and run now over the API. Real gateways on the engine of this run, sharing one board.
import { wallClock } from '../../src/clock.js';
import { afterEach, describe, expect, it } from 'vitest';
import { archiveIdle } from '../../src/kanban/moves/archive.js';
import { api, startGateway, type TestGateway } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';
import { ENGINE, rawQuery } from '../helpers/store.js';

const at = (iso: string) => Date.parse(iso);

/** A clock the test moves. */
function movedClock(start: string) {
  let now = at(start);
  return {
    read: () => now,
    to: (iso: string) => {
      now = at(iso);
    },
  };
}

const hourly = {
  cron: '0 * * * *',
  task: { title: 'hourly triage', body: 'look at new issues', priority: 3 },
};

const gateways: TestGateway[] = [];
afterEach(async () => {
  for (const gw of gateways.splice(0)) await gw.close();
});

/** A daemon's gateway on `dataDir`'s board with its scheduler started at the clock's time. */
async function daemonOn(
  dataDir: string,
  clock: { read: () => number },
  schedules: object = { triage: hourly },
): Promise<TestGateway> {
  const gw = await startGateway({ schedules }, { dataDir, clock: wallClock(clock.read) });
  gateways.push(gw);
  await gw.scheduler.start();
  return gw;
}

async function scheduledTasks(gw: TestGateway) {
  const { tasks } = await gw.kanban.board.list({ limit: 100 });
  return tasks.filter((t) => t.origin.kind === 'schedule');
}

async function eventsOf(gw: TestGateway, kind: string) {
  return (await gw.kanban.board.events.list(0, 1000)).filter((e) => e.kind === kind);
}

describe('a schedule firing', () => {
  it('makes its task ready at the fire time, with the schedule and the firing on it, once', async () => {
    const clock = movedClock('2026-12-07T09:59:30Z');
    const gw = await daemonOn(tempDir(), clock);
    expect(await scheduledTasks(gw)).toEqual([]);
    clock.to('2026-12-07T10:00:00.200Z');
    await gw.scheduler.check();
    await gw.scheduler.check();
    const [task, ...more] = await scheduledTasks(gw);
    expect(more).toEqual([]);
    expect(task).toMatchObject({
      title: 'hourly triage',
      body: 'look at new issues',
      priority: 3,
      status: 'ready',
      schedule: { name: 'triage', fireTime: '2026-12-07T10:00:00.000Z' },
    });
    const keys = await rawQuery(gw.dataDir, 'SELECT key FROM idempotency_keys');
    expect(keys.map((k) => k.key)).toEqual(['schedule:triage:2026-12-07T10:00:00.000Z']);
    const listed = await api(gw.url, 'GET', '/schedules');
    expect(listed.body.schedules).toEqual([
      {
        name: 'triage',
        cron: '0 * * * *',
        timezone: 'UTC',
        overlap: 'skip',
        enabled: true,
        paused: false,
        nextFireTime: '2026-12-07T11:00:00.000Z',
        lastFireTime: '2026-12-07T10:00:00.000Z',
        lastTaskId: task!.id,
      },
    ]);
  });

  it.runIf(ENGINE === 'postgres')(
    'is made once when two hosts on one board try it at the same moment',
    async () => {
      const dataDir = tempDir();
      const clock = movedClock('2026-12-07T09:59:00Z');
      const a = await daemonOn(dataDir, clock);
      const b = await daemonOn(dataDir, clock);
      clock.to('2026-12-07T10:00:01Z');
      await Promise.all([a.scheduler.check(), b.scheduler.check(), a.scheduler.check()]);
      expect(await scheduledTasks(a)).toHaveLength(1);
      expect(await scheduledTasks(b)).toHaveLength(1);
    },
  );

  it('is made once across a restart right after it, and a firing missed while no daemon ran is made at start', async () => {
    const dataDir = tempDir();
    const clock = movedClock('2026-12-07T09:59:00Z');
    const first = await daemonOn(dataDir, clock);
    clock.to('2026-12-07T10:00:00.100Z');
    await first.scheduler.check();
    await first.close();
    // Restarted 30 s later: the 10:00 firing is the board's already.
    clock.to('2026-12-07T10:00:30Z');
    const second = await daemonOn(dataDir, clock);
    expect(await scheduledTasks(second)).toHaveLength(1);
    await second.close();
    // Down from 10:01 to 11:20: the 11:00 firing is 20 minutes old, less than its hour.
    clock.to('2026-12-07T11:20:00Z');
    const third = await daemonOn(dataDir, clock, {
      triage: { ...hourly, overlap: 'queue' },
    });
    const tasks = await scheduledTasks(third);
    expect(tasks.map((t) => t.schedule!.fireTime).sort()).toEqual([
      '2026-12-07T10:00:00.000Z',
      '2026-12-07T11:00:00.000Z',
    ]);
  });

  it('missed by more than its period is not made, and says so', async () => {
    const dataDir = tempDir();
    const weekdays = { cron: '0 9 * * 1-5', task: { title: 'standup notes' } };
    // Thursday 09:00 is made; the daemon stops; it starts again on Saturday at noon. Friday's
    // firing is 27 hours old, more than the day between two firings.
    const clock = movedClock('2026-12-03T08:59:00Z');
    const thursday = await daemonOn(dataDir, clock, { standup: weekdays });
    clock.to('2026-12-03T09:00:01Z');
    await thursday.scheduler.check();
    expect(await scheduledTasks(thursday)).toHaveLength(1);
    await thursday.close();
    clock.to('2026-12-05T12:00:00Z');
    const saturday = await daemonOn(dataDir, clock, { standup: weekdays });
    expect(await scheduledTasks(saturday)).toHaveLength(1);
    const [skipped] = await eventsOf(saturday, 'schedule_skipped');
    expect(skipped?.payload).toEqual({
      schedule: 'standup',
      fireTime: '2026-12-04T09:00:00.000Z',
      reason: 'missed',
    });
    // Nor is it made at a later start.
    await saturday.close();
    clock.to('2026-12-05T12:05:00Z');
    const again = await daemonOn(dataDir, clock, { standup: weekdays });
    expect(await scheduledTasks(again)).toHaveLength(1);
    expect(await eventsOf(again, 'schedule_skipped')).toHaveLength(1);
  });

  it('with overlap "skip" makes nothing while its previous task is open, and again once it is not', async () => {
    const clock = movedClock('2026-12-07T09:59:00Z');
    const gw = await daemonOn(tempDir(), clock);
    clock.to('2026-12-07T10:00:01Z');
    await gw.scheduler.check();
    const [first] = await scheduledTasks(gw);
    clock.to('2026-12-07T11:00:01Z');
    await gw.scheduler.check();
    expect(await scheduledTasks(gw)).toHaveLength(1);
    const [skipped] = await eventsOf(gw, 'schedule_skipped');
    expect(skipped).toMatchObject({
      taskId: first!.id,
      payload: {
        schedule: 'triage',
        fireTime: '2026-12-07T11:00:00.000Z',
        reason: 'previous open',
      },
    });
    await gw.kanban.board.transact((tx) => archiveIdle(tx, first!.id));
    clock.to('2026-12-07T12:00:01Z');
    await gw.scheduler.check();
    const fireTimes = (await scheduledTasks(gw)).map((t) => t.schedule!.fireTime).sort();
    expect(fireTimes).toEqual(['2026-12-07T10:00:00.000Z', '2026-12-07T12:00:00.000Z']);
  });

  it('paused makes nothing (nor later), resumed makes the next one, and run now makes one at once', async () => {
    const dataDir = tempDir();
    const clock = movedClock('2026-12-07T09:59:00Z');
    const gw = await daemonOn(dataDir, clock, { triage: { ...hourly, overlap: 'queue' } });
    const paused = await api(gw.url, 'POST', '/schedules/triage/pause');
    expect(paused.body).toEqual({ schedule: 'triage', changed: true });
    expect((await api(gw.url, 'GET', '/schedules')).body.schedules[0]).toMatchObject({
      paused: true,
      nextFireTime: null,
    });
    clock.to('2026-12-07T10:00:01Z');
    await gw.scheduler.check();
    expect(await scheduledTasks(gw)).toHaveLength(0);
    const now = await api(gw.url, 'POST', '/schedules/triage/run');
    expect(now.status).toBe(201);
    expect(now.body.schedule).toEqual({ name: 'triage', fireTime: '2026-12-07T10:00:01.000Z' });
    expect((await api(gw.url, 'POST', '/schedules/triage/resume')).body.changed).toBe(true);
    // A restart does not make the 10:00 firing that came while it was paused.
    await gw.close();
    clock.to('2026-12-07T10:30:00Z');
    const again = await daemonOn(dataDir, clock, { triage: { ...hourly, overlap: 'queue' } });
    expect(await scheduledTasks(again)).toHaveLength(1);
    clock.to('2026-12-07T11:00:00Z');
    await again.scheduler.check();
    expect(await scheduledTasks(again)).toHaveLength(2);
    expect((await eventsOf(again, 'schedule_paused'))[0]?.payload).toEqual({
      schedule: 'triage',
      by: 'api',
    });
  });

  it('is made even when a client sent its key first, and only once', async () => {
    const clock = movedClock('2026-12-07T09:59:00Z');
    const gw = await daemonOn(tempDir(), clock);
    const squatted = await api(
      gw.url,
      'POST',
      '/tasks',
      { title: 'not the schedule’s' },
      { 'idempotency-key': 'schedule:triage:2026-12-07T10:00:00.000Z' },
    );
    expect(squatted.status).toBe(201);
    clock.to('2026-12-07T10:00:00.500Z');
    await gw.scheduler.check();
    await gw.scheduler.check();
    const made = await scheduledTasks(gw);
    expect(made.map((t) => t.schedule)).toEqual([
      { name: 'triage', fireTime: '2026-12-07T10:00:00.000Z' },
    ]);
  });

  it('reads its expression in its time zone', async () => {
    const clock = movedClock('2026-07-01T00:00:00Z');
    const gw = await daemonOn(tempDir(), clock, {
      nightly: { cron: '30 3 * * *', timezone: 'Europe/Berlin', task: { title: 'bump deps' } },
    });
    const [s] = (await api(gw.url, 'GET', '/schedules')).body.schedules;
    // 03:30 in Berlin in summer is 01:30 UTC.
    expect(s.nextFireTime).toBe('2026-07-01T01:30:00.000Z');
  });

  it('answers 404 for a schedule that is not configured, changing nothing', async () => {
    const gw = await daemonOn(tempDir(), movedClock('2026-12-07T09:59:00Z'));
    for (const action of ['pause', 'resume', 'run']) {
      const res = await api(gw.url, 'POST', `/schedules/nightly/${action}`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('SCHEDULE_NOT_FOUND');
    }
    expect(await rawQuery(gw.dataDir, 'SELECT name FROM schedules')).toEqual([]);
    expect((await api(gw.url, 'POST', '/schedules/..%2F/run')).status).toBe(400);
  });
});
