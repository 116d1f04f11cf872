// A picked attempt's work as the task's pull request (docs/attempts.md): in a repository with
// pull requests the attempts open none; the pick makes the task's worktree on its kept branch,
// pushes it and opens one PR, and the task is done when it is merged. Both engines, against the
// GitHub double backed by a real bare repository.
import { afterEach, describe, expect, it } from 'vitest';
import { api } from '../helpers/app.js';
import { gitOut } from '../helpers/git.js';
import { githubDouble, type GithubDouble } from '../helpers/forges/github.js';
import { ForgeModel } from '../helpers/forges/model.js';
import { waitFor } from '../helpers/wait.js';
import { eventsOf, getTask, settledIn } from '../helpers/workers.js';
import { prGateway } from './setup.js';

const doubles: GithubDouble[] = [];
afterEach(async () => {
  for (const d of doubles.splice(0)) await d.close();
});

describe('a picked attempt in a repository with pull requests', () => {
  it('opens one PR from the task’s own branch with the picked work, and is done when it is merged', async () => {
    const { model, checkout } = ForgeModel.withRepository();
    const double = await githubDouble(model);
    doubles.push(double);
    const gw = await prGateway(model, checkout, double.url, double.token);
    await gw.attempts.start();
    const made = await api(gw.url, 'POST', '/tasks', {
      title: 'Add the change file',
      attempts: { variants: [{ assignee: 'dev' }, { assignee: 'dev' }] },
    });
    expect(made.status).toBe(201);
    const id = made.body.id as string;
    const [first, second] = made.body.attempts.ids as [string, string];
    await settledIn(gw, id, 'review', 30_000);
    // The attempts' own work opened nothing: it is compared first.
    expect(model.prs).toHaveLength(0);

    // Two picks at once (a double click): one is made, the other refused.
    const both = await Promise.all([
      api(gw.url, 'POST', `/tasks/${id}/attempts/${second}/pick`),
      api(gw.url, 'POST', `/tasks/${id}/attempts/${second}/pick`),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    const picked = both.find((r) => r.status === 200)!;
    // It waits in review for its pull request, on a worktree of its own branch.
    expect(picked.body).toMatchObject({
      status: 'review',
      attempts: { picked: second, branch: `gatehouse/${id}` },
      workspace: { kind: 'worktree', branch: `gatehouse/${id}`, state: 'active' },
    });
    const withPr = await waitFor('the task with its pull request', async () => {
      const t = await getTask(gw, id);
      return t.pr !== null ? t : null;
    });
    expect(model.prs).toHaveLength(1);
    expect(model.prs[0]).toMatchObject({
      head: `gatehouse/${id}`,
      base: 'main',
      title: 'Add the change file',
      state: 'open',
    });
    // On origin: the picked attempt's uncommitted file, kept by the pick's commit.
    const head = model.headSha(`gatehouse/${id}`)!;
    expect(withPr.pr.headSha).toBe(head);
    expect(gitOut(model.bare, 'show', `${head}:change.txt`)).toBe("the task's change");
    expect(gitOut(model.bare, 'log', '-1', '--format=%B', head)).toContain(
      `attempt ${second} of task ${id}, picked by api`,
    );
    const event = (await eventsOf(gw, id)).find((e) => e.kind === 'attempt_picked');
    expect(event?.payload).toEqual({
      attempt: second,
      branch: `gatehouse/${id}`,
      by: 'api',
      pullRequest: true,
    });
    // The other attempt is archived, its work preserved; only the task's PR was opened.
    const other = await getTask(gw, first);
    expect(other.status).toBe('archived');
    expect(other.workspace.preservedRef).toBe(`refs/gatehouse/preserved/${first}`);

    model.merge(1);
    const done = await settledIn(gw, id, 'done', 30_000);
    expect(done.pr.state).toBe('merged');
    expect(double.server.seen(/\/pulls$/, 'POST')).toHaveLength(1);
  });
});
