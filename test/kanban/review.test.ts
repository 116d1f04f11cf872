// Review (docs/workers.md): a profile's or a task's completed runs wait in `review` for a person, who
// approves them (done, children promoted) or sends them back with what to change (ready, the
// text its next run's instructions, not a failure). Both engines.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, startGateway } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';
import { createTask, eventsOf, getTask, settledIn } from '../helpers/workers.js';

const fast = { tickSeconds: 0.1, killGraceSeconds: 0.3, failureLimit: 2 };

/** Reports what it was asked: its instructions if any, else "first". */
const worker = {
  command: [
    '/bin/sh',
    '-c',
    `if [ -n "$GATEHOUSE_INSTRUCTIONS_FILE" ]; then s=$(cat "$GATEHOUSE_INSTRUCTIONS_FILE"); else s=first; fi
printf '{"status":"done","summary":"%s"}' "$s" > "$GATEHOUSE_RUN_DIR/result.json"`,
  ],
};

async function gateway() {
  return startGateway(
    {
      workers: {
        ...fast,
        defaultProfile: 'reviewed',
        profiles: { reviewed: { ...worker, review: true }, plain: worker },
      },
    },
    { dispatch: true },
  );
}

describe('review', () => {
  it('holds a completed run for review, sends it back with changes, and approves it', async () => {
    const gw = await gateway();
    const { id } = await createTask(gw, { title: 'reviewed work' });
    const { id: child } = await createTask(gw, {
      title: 'after it',
      parents: [id],
      assignee: 'plain',
    });
    const first = await settledIn(gw, id, 'review');
    expect(first).toMatchObject({ summary: 'first', completedAt: null, currentRunId: null });
    expect(first.runs[0].outcome).toBe('completed');
    // Seen as review: counts, the status filter; its child still waits.
    expect((await api(gw.url, 'GET', '/tasks/counts')).body.counts).toMatchObject({ review: 1 });
    const listed = await api(gw.url, 'GET', '/tasks?status=review');
    expect(listed.body.tasks.map((t: { id: string }) => t.id)).toEqual([id]);
    expect((await getTask(gw, child)).status).toBe('todo');

    // Sent back: ready with the text as instructions and a comment, not a failure.
    const sent = await api(gw.url, 'POST', `/tasks/${id}/request-changes`, {
      text: 'use tabs',
      author: 'ann',
    });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ status: 'ready', instructions: 'use tabs' });
    const second = await waitFor('the second round in review', async () => {
      const t = await getTask(gw, id);
      return t.status === 'review' && t.runs.length === 2 && t.runs[1].endedAt ? t : null;
    });
    expect(second.summary).toBe('use tabs');
    expect(second.consecutiveFailures).toBe(0);
    const taskFile = JSON.parse(
      readFileSync(join(gw.dataDir, 'runs', second.runs[1].id, 'task.json'), 'utf8'),
    );
    expect(taskFile.instructions).toBe('use tabs');

    const approved = await api(gw.url, 'POST', `/tasks/${id}/approve`, { by: 'ann' });
    expect(approved.status).toBe(200);
    expect(approved.body.status).toBe('done');
    expect(approved.body.completedAt).toEqual(expect.any(Number));
    await settledIn(gw, child, 'done');
    const events = await eventsOf(gw, id);
    const kinds = events.map((e) => e.kind);
    expect(kinds.filter((k) => k === 'completed')).toHaveLength(2);
    expect(events.find((e) => e.kind === 'changes_requested')?.payload).toEqual({
      text: 'use tabs',
      author: 'ann',
      status: 'ready',
    });
    expect(events.find((e) => e.kind === 'commented')?.payload).toMatchObject({
      author: 'ann',
      text: 'use tabs',
    });
    expect(events.find((e) => e.kind === 'approved')?.payload).toEqual({ by: 'ann' });
    expect(events.find((e) => e.kind === 'completed')?.payload.review).toBe(true);
  });

  it('refuses approve and changes for a task not in review (409), and bad input (400), changing nothing', async () => {
    const gw = await gateway();
    const { id } = await createTask(gw, { title: 'not yet', assignee: 'plain' });
    const done = await settledIn(gw, id, 'done');
    for (const [path, body] of [
      ['approve', {}],
      ['request-changes', { text: 'x' }],
    ] as const) {
      const res = await api(gw.url, 'POST', `/tasks/${id}/${path}`, body);
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('INVALID_TRANSITION');
    }
    for (const body of [{}, { text: '' }, { text: 'x', extra: 1 }])
      expect((await api(gw.url, 'POST', `/tasks/${id}/request-changes`, body)).status).toBe(400);
    expect((await api(gw.url, 'POST', '/tasks/t_000000000000/approve', {})).status).toBe(404);
    expect(await getTask(gw, id)).toEqual(done);
  });

  it('lets a task ask for review or not, whatever its profile says; follow-up and archive from review', async () => {
    const gw = await gateway();
    const { id: skip } = await createTask(gw, { title: 'no review', review: false });
    await settledIn(gw, skip, 'done');
    const { id: ask } = await createTask(gw, {
      title: 'review me',
      assignee: 'plain',
      review: true,
    });
    expect((await settledIn(gw, ask, 'review')).review).toBe(true);
    const followed = await api(gw.url, 'POST', `/tasks/${ask}/follow-up`, { text: 'again' });
    expect(followed.body.status).toBe('ready');
    await waitFor('back in review', async () => {
      const t = await getTask(gw, ask);
      return t.status === 'review' && t.runs.length === 2 && t.runs[1].endedAt ? t : null;
    });
    const archived = await api(gw.url, 'POST', `/tasks/${ask}/archive`);
    expect(archived.body.status).toBe('archived');
  });
});
