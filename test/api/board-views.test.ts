// What the dashboard reads besides the tasks: a search with its counts and pages, the runs
// finished over the last hour (from the board, not from what a page saw), the live workers.
import { wallClock } from '../../src/clock.js';
import { describe, expect, it } from 'vitest';
import { api, startGateway } from '../helpers/app.js';
import { attachSleeper, claim } from '../helpers/board.js';

describe('board views', () => {
  it('finds tasks by title in any case, or by id, pages the finds, and counts them by status', async () => {
    const gw = await startGateway();
    const titles = ['Deploy the API', 'deploy the web', 'DEPLOY docs', 'redeploy-all', 'other'];
    const made = [];
    for (const title of titles) made.push((await api(gw.url, 'POST', '/tasks', { title })).body);
    await api(gw.url, 'POST', `/tasks/${made[2].id}/archive`);

    const first = await api(gw.url, 'GET', '/tasks?q=deploy&order=desc&limit=2');
    expect(first.body.tasks.map((t: { title: string }) => t.title)).toEqual([
      'redeploy-all',
      'DEPLOY docs',
    ]);
    const second = await api(
      gw.url,
      'GET',
      `/tasks?q=deploy&order=desc&limit=2&cursor=${first.body.nextCursor}`,
    );
    expect(second.body.tasks.map((t: { title: string }) => t.title)).toEqual([
      'deploy the web',
      'Deploy the API',
    ]);
    expect(second.body.nextCursor).toBeNull();
    expect(
      (await api(gw.url, 'GET', `/tasks?q=${made[4].id}`)).body.tasks.map(
        (t: { title: string }) => t.title,
      ),
    ).toEqual(['other']);
    expect((await api(gw.url, 'GET', '/tasks?q=deploy&status=archived')).body.tasks).toHaveLength(
      1,
    );

    const counts = await api(gw.url, 'GET', '/tasks/counts?q=deploy');
    expect(counts.body.counts).toEqual({
      todo: 0,
      ready: 3,
      running: 0,
      review: 0,
      blocked: 0,
      done: 0,
      archived: 1,
    });
    expect((await api(gw.url, 'GET', '/tasks/counts')).body.counts.ready).toBe(4);
    // A search is text, not a pattern: % and _ match only themselves.
    expect((await api(gw.url, 'GET', '/tasks?q=%25')).body.tasks).toEqual([]);
    const refused = await api(gw.url, 'GET', '/tasks/counts?q=');
    expect(refused.status).toBe(400);
  });

  it('counts the runs that ended in the last hour by outcome, and lists live workers with their task', async () => {
    // The board's clock stands 45 s into a minute: a run ending then belongs to that minute.
    let now = Date.UTC(2026, 11, 1, 12, 30, 45);
    const gw = await startGateway({}, { clock: wallClock(() => now) });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await api(gw.url, 'POST', '/tasks', { title: `run ${i}` })).body.id);
    for (const [i, id] of ids.slice(0, 2).entries()) {
      const run = await claim(gw.kanban.board, gw.dataDir, id);
      const verdict = i === 0 ? { summary: 'ok' } : { reason: 'needs a person' };
      const res = await api(
        gw.url,
        'POST',
        `/tasks/${id}/${i === 0 ? 'complete' : 'block'}`,
        verdict,
        {
          authorization: `Bearer ${run.token}`,
        },
      );
      expect(res.status).toBe(200);
    }
    const live = await claim(gw.kanban.board, gw.dataDir, ids[2]!);
    const pid = await attachSleeper(gw.kanban.board, live);

    now += 10_000;
    const hour = (await api(gw.url, 'GET', '/stats/throughput?window=hour')).body;
    expect(hour.totals).toEqual({ completed: 1, blocked: 1 });
    expect(hour.buckets).toHaveLength(60);
    expect(hour.buckets.at(-1)).toEqual({
      at: Date.UTC(2026, 11, 1, 12, 30),
      outcomes: { completed: 1, blocked: 1 },
    });
    // An hour on, they have left the window.
    now += 3_600_000;
    expect((await api(gw.url, 'GET', '/stats/throughput?window=hour')).body.totals).toEqual({});
    const day = (await api(gw.url, 'GET', '/stats/throughput?window=day')).body;
    expect(day.buckets).toHaveLength(96);
    expect(day.totals).toEqual({ completed: 1, blocked: 1 });

    const { workers } = (await api(gw.url, 'GET', '/workers')).body;
    expect(workers).toEqual([
      expect.objectContaining({ runId: live.run.id, taskId: ids[2], title: 'run 2', pid }),
    ]);
  });
});
