// Best of N (docs/attempts.md) with real worktrees: one task tried by the real claude (on the
// Anthropic double, in its sandbox) and by a script, judged by a command run in each worktree
// (in the attempt's profile's sandbox), one picked: its work kept on the task's own branch, the
// other archived with its work on its preserved ref. Both engines.
import { describe, expect, it } from 'vitest';
import { api, startGateway } from '../helpers/app.js';
import { ENDS_AGENTS, claudeProfile, shellCall } from '../helpers/agents.js';
import { gitOut, makeRepo } from '../helpers/git.js';
import { anthropicDouble } from '../helpers/model-doubles.js';
import { waitFor } from '../helpers/wait.js';
import { createTask, eventsOf, getTask, settledIn } from '../helpers/workers.js';

const worktree = { workspace: 'worktree', repo: 'app' };

/** A script that answers 41 in its worktree and reports done. */
const wrong = {
  command: [
    '/bin/sh',
    '-c',
    'echo 41 > answer.txt && printf \'{"status":"done","summary":"answered 41"}\' > "$GATEHOUSE_RUN_DIR/result.json"',
  ],
  ...worktree,
};

async function gateway(repo: string, profiles: Record<string, object>) {
  const gw = await startGateway(
    {
      ...ENDS_AGENTS,
      workers: {
        tickSeconds: 0.1,
        killGraceSeconds: 0.5,
        defaultProfile: Object.keys(profiles)[0],
        profiles,
      },
      workspaces: { repos: { app: { path: repo } }, minFreeBytes: 0 },
    },
    { dispatch: true },
  );
  await gw.attempts.start();
  return gw;
}

const judge = { command: ['/bin/sh', '-c', 'test "$(cat answer.txt)" = 42 && echo right'] };

describe('best of N', () => {
  it('runs the attempts in their own worktrees, judges each in its sandbox, and keeps the one picked', async () => {
    const double = await anthropicDouble();
    double.script = (_req, turn) =>
      turn === 0 ? shellCall('claude', 'echo 42 > answer.txt') : { text: 'answered 42' };
    const repo = makeRepo();
    const gw = await gateway(repo, { claude: claudeProfile(double, {}, worktree), wrong });
    // Given to its attempts as it is made: it never runs itself.
    const made = await api(gw.url, 'POST', '/tasks', {
      title: 'answer the question',
      attempts: {
        variants: [{ assignee: 'claude' }, { assignee: 'wrong' }],
        // Sandboxed as claude's runs are, its judge does not see the board's folder.
        judge: {
          command: [
            '/bin/sh',
            '-c',
            `ls '${gw.dataDir}/runs' 2>/dev/null | grep -q . && echo sees-the-board; ${judge.command[2]}`,
          ],
        },
      },
    });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ status: 'todo', awaiting: 'attempts' });
    const id = made.body.id as string;
    const [good, bad] = made.body.attempts.ids as [string, string];
    for (const a of [good, bad]) expect((await getTask(gw, a)).attemptOf).toBe(id);
    const review = await settledIn(gw, id, 'review', 60_000);
    expect(review.awaiting).toBeNull();
    const side = (await api(gw.url, 'GET', `/tasks/${id}/attempts`)).body.attempts;
    expect(side).toMatchObject([
      {
        id: good,
        assignee: 'claude',
        status: 'done',
        judge: { exitCode: 0, output: 'right\n' },
        evidence: { filesChanged: 1, insertions: 1, deletions: 0 },
      },
      {
        id: bad,
        assignee: 'wrong',
        status: 'done',
        judge: { exitCode: 1 },
        summary: 'answered 41',
      },
    ]);
    expect(side[0].tokens).toBeGreaterThan(0);
    // Two worktrees, two branches, from the same base.
    const goodTask = await getTask(gw, good);
    const badTask = await getTask(gw, bad);
    expect(goodTask.workspace.path).not.toBe(badTask.workspace.path);
    // Approved or sent back as a task in review, it would leave its attempts: refused.
    expect((await api(gw.url, 'POST', `/tasks/${id}/approve`)).status).toBe(409);
    // Not an attempt of this task: refused, nothing changes.
    const stranger = await createTask(gw, { title: 'another' });
    const refused = await api(gw.url, 'POST', `/tasks/${id}/attempts/${stranger.id}/pick`);
    expect(refused.status).toBe(400);
    const picked = await api(gw.url, 'POST', `/tasks/${id}/attempts/${good}/pick`);
    expect(picked.status).toBe(200);
    expect(picked.body).toMatchObject({
      status: 'done',
      attempts: { picked: good, branch: `gatehouse/${id}` },
    });
    // The picked work on the task's own branch (written, not committed, by claude's tool).
    expect(gitOut(repo, 'show', `gatehouse/${id}:answer.txt`).trim()).toBe('42');
    // The other archived, its work kept on its preserved ref.
    await waitFor(
      'the other attempt’s work preserved',
      async () => (await eventsOf(gw, bad)).find((e) => e.kind === 'workspace_preserved') ?? null,
      30_000,
    );
    expect((await getTask(gw, bad)).status).toBe('archived');
    expect(gitOut(repo, 'show', `refs/gatehouse/preserved/${bad}:answer.txt`).trim()).toBe('41');
    const again = await api(gw.url, 'POST', `/tasks/${id}/attempts/${bad}/pick`);
    expect(again.status).toBe(409);
  });

  it('with autoPick "judge" keeps the passing attempt without a person', async () => {
    const double = await anthropicDouble();
    double.script = (_req, turn) =>
      turn === 0 ? shellCall('claude', 'echo 42 > answer.txt') : { text: 'answered 42' };
    const repo = makeRepo();
    const gw = await gateway(repo, {
      claude: claudeProfile(double, {}, worktree),
      wrong,
      held: { ...wrong, maxConcurrent: 0 },
    });
    // Waiting in ready (its profile runs nothing), then given to attempts by its own route.
    const { id } = await createTask(gw, { title: 'answer it', assignee: 'held' });
    const started = await api(gw.url, 'POST', `/tasks/${id}/attempts`, {
      variants: [{ assignee: 'wrong' }, { assignee: 'claude' }],
      judge,
      autoPick: 'judge',
    });
    expect(started.status).toBe(201);
    const [, good] = started.body.attempts.map((a: { id: string }) => a.id);
    const done = await settledIn(gw, id, 'done', 60_000);
    expect(done.attempts).toMatchObject({ picked: good, branch: `gatehouse/${id}` });
    const picked = (await eventsOf(gw, id)).find((e) => e.kind === 'attempt_picked');
    expect(picked?.payload).toEqual({
      attempt: good,
      branch: `gatehouse/${id}`,
      by: 'judge',
      pullRequest: false,
    });
  });

  it('refuses attempts of a running, done or already divided task, and bad variants, changing nothing', async () => {
    const repo = makeRepo();
    const gw = await gateway(repo, { wrong });
    const { id } = await createTask(gw, { title: 'x', assignee: 'wrong' });
    await settledIn(gw, id, 'done', 30_000);
    const done = await api(gw.url, 'POST', `/tasks/${id}/attempts`, { n: 2 });
    expect(done.status).toBe(409);
    const other = await createTask(gw, { title: 'y', assignee: 'nobody-runs-this' }).catch(
      () => null,
    );
    expect(other).toBeNull();
    const fresh = (await api(gw.url, 'POST', '/tasks', { title: 'z', parents: [id] })).body;
    const bad = await api(gw.url, 'POST', `/tasks/${fresh.id}/attempts`, {
      variants: [{ assignee: 'nobody' }, { assignee: 'wrong' }],
    });
    expect(bad.status).toBe(400);
    const one = await api(gw.url, 'POST', `/tasks/${fresh.id}/attempts`, { n: 1 });
    expect(one.status).toBe(400);
    expect((await getTask(gw, fresh.id)).attempts).toBeNull();
  });
});
