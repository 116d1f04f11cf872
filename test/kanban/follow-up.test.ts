// Follow-ups (docs/workers.md): a done or blocked task sent back with more to do runs again in its own
// workspace, told what to do in task.json and $GATEHOUSE_INSTRUCTIONS_FILE. Both engines.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, startGateway } from '../helpers/app.js';
import { makeRepo } from '../helpers/git.js';
import { waitFor } from '../helpers/wait.js';
import { createTask, eventsOf, getTask, settledIn } from '../helpers/workers.js';

const fast = { tickSeconds: 0.1, killGraceSeconds: 0.3, failureLimit: 2 };

/**
 * Without instructions it writes notes.txt and reports `first` (or blocks, with BLOCK_FIRST);
 * with them it appends them to notes.txt and reports what the file holds.
 */
const worker = {
  command: [
    '/bin/sh',
    '-c',
    `if [ -n "$GATEHOUSE_INSTRUCTIONS_FILE" ]; then cat "$GATEHOUSE_INSTRUCTIONS_FILE" >> notes.txt; echo >> notes.txt
  printf '{"status":"done","summary":"%s"}' "$(tr '\\n' '|' < notes.txt)" > "$GATEHOUSE_RUN_DIR/result.json"
elif [ -n "$BLOCK_FIRST" ]; then echo first > notes.txt; printf '{"status":"blocked","reason":"needs a decision"}' > "$GATEHOUSE_RUN_DIR/result.json"
else echo first > notes.txt; printf '{"status":"done","summary":"first"}' > "$GATEHOUSE_RUN_DIR/result.json"; fi`,
  ],
  workspace: 'worktree',
  repo: 'app',
};

async function gateway(env: Record<string, string> = {}) {
  return startGateway(
    {
      workers: { ...fast, defaultProfile: 'agent', profiles: { agent: { ...worker, env } } },
      workspaces: { repos: { app: { path: makeRepo() } }, minFreeBytes: 0 },
    },
    { dispatch: true },
  );
}

describe('follow-ups', () => {
  it('runs a done task again in the same worktree, with the text as its instructions', async () => {
    const gw = await gateway();
    const { id } = await createTask(gw, { title: 'write notes' });
    const first = await settledIn(gw, id, 'done');
    expect(first.summary).toBe('first');
    const text = 'also say second\nand keep the first line';
    const sent = await api(gw.url, 'POST', `/tasks/${id}/follow-up`, { text, author: 'reviewer' });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ status: 'ready', instructions: text, completedAt: null });
    const done = await waitFor('the follow-up run done', async () => {
      const t = await getTask(gw, id);
      return t.status === 'done' && t.runs.length === 2 ? t : null;
    });
    // The same worktree: the first run's file is there, with the instructions after it.
    expect(done.summary).toBe(`first|${text.replace('\n', '|')}|`);
    expect(done.workspace.path).toBe(first.workspace.path);
    expect(done.instructions).toBeNull();
    const taskFile = JSON.parse(
      readFileSync(join(gw.dataDir, 'runs', done.runs[1].id, 'task.json'), 'utf8'),
    );
    expect(taskFile.instructions).toBe(text);
    const followed = (await eventsOf(gw, id)).find((e) => e.kind === 'followed_up');
    expect(followed?.payload).toEqual({ text, author: 'reviewer', status: 'ready' });
  });

  it('takes a blocked task up again with its instructions', async () => {
    const gw = await gateway({ BLOCK_FIRST: '1' });
    const { id } = await createTask(gw, { title: 'decide' });
    await settledIn(gw, id, 'blocked');
    await api(gw.url, 'POST', `/tasks/${id}/follow-up`, { text: 'take option B' });
    const done = await waitFor('done after the follow-up', async () => {
      const t = await getTask(gw, id);
      return t.status === 'done' ? t : null;
    });
    expect(done.summary).toBe('first|take option B|');
    expect(done.consecutiveFailures).toBe(0);
  });

  it('refuses a follow-up on a task that is not done or blocked, and bad input, changing nothing', async () => {
    const gw = await startGateway({ workers: { ...fast, maxConcurrent: 0 } }, { dispatch: true });
    const { id } = await createTask(gw, { title: 'still ready' });
    const refused = await api(gw.url, 'POST', `/tasks/${id}/follow-up`, { text: 'more' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('INVALID_TRANSITION');
    expect(
      (await api(gw.url, 'POST', '/tasks/t_000000000000/follow-up', { text: 'x' })).status,
    ).toBe(404);
    for (const body of [{}, { text: '' }, { text: 'x', bogus: 1 }, { text: 'x'.repeat(100_001) }])
      expect((await api(gw.url, 'POST', `/tasks/${id}/follow-up`, body)).status).toBe(400);
    const task = await getTask(gw, id);
    expect(task).toMatchObject({ status: 'ready', instructions: null });
    expect((await eventsOf(gw, id)).map((e) => e.kind)).toEqual(['created']);
  });

  it('sends a task back once for twins with one Idempotency-Key, answering both alike', async () => {
    const gw = await gateway();
    const { id } = await createTask(gw, { title: 'once' });
    await settledIn(gw, id, 'done');
    const headers = { 'idempotency-key': `follow-${id}` };
    const [a, b] = await Promise.all([
      api(gw.url, 'POST', `/tasks/${id}/follow-up`, { text: 'again' }, headers),
      api(gw.url, 'POST', `/tasks/${id}/follow-up`, { text: 'again' }, headers),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.id).toBe(id);
    expect(b.body).toEqual(a.body);
    await waitFor(
      'the follow-up done',
      async () =>
        (await getTask(gw, id)).runs.length === 2 && (await getTask(gw, id)).status === 'done',
    );
    const kinds = (await eventsOf(gw, id)).map((e) => e.kind);
    expect(kinds.filter((k) => k === 'followed_up')).toHaveLength(1);
    // The same key again later: the first answer, not a second follow-up of the done task.
    const late = await api(gw.url, 'POST', `/tasks/${id}/follow-up`, { text: 'again' }, headers);
    expect(late.status).toBe(200);
    expect(late.headers.get('idempotent-replayed')).toBe('true');
    expect((await getTask(gw, id)).status).toBe('done');
  });
});
