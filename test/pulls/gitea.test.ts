// Pull requests on Gitea and Forgejo (docs/pull-requests.md), where their API differs from
// GitHub's: found by base and head, statuses, reviews' comments, permissions. Both engines.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { giteaDeliver, giteaDouble, type GiteaDouble } from '../helpers/forges/gitea.js';
import { ForgeModel, MEMBER, STRANGER } from '../helpers/forges/model.js';
import { waitFor } from '../helpers/wait.js';
import { createTask, eventsOf, getTask } from '../helpers/workers.js';
import { HOOK_SECRET, prGateway, taskWithPr } from './setup.js';

const doubles: GiteaDouble[] = [];
afterEach(async () => {
  for (const d of doubles.splice(0)) await d.close();
});

async function gitea() {
  const { model, checkout } = ForgeModel.withRepository();
  const double = await giteaDouble(model);
  doubles.push(double);
  return { model, checkout, double };
}

describe('pull requests on Gitea', () => {
  it("adopts the PR Gitea's 409 names, follows its required status, and sends a collaborator's review", async () => {
    const { model, checkout, double } = await gitea();
    model.protection = ['ci/build'];
    const gw = await prGateway(model, checkout, double.url, double.token, { provider: 'gitea' });
    double.server.fail({
      path: /\/pulls\/main\/gatehouse/,
      status: 404,
      body: { message: 'not found' },
      times: 1,
    });
    const { id } = await createTask(gw, { title: 'on gitea' });
    model.open(`gatehouse/${id}`, 'main', 'by a person', '', false, 'acme');
    const task = await waitFor('the task with its PR', async () => {
      const t = await getTask(gw, id);
      return t.pr ? t : null;
    });
    expect(task.pr).toMatchObject({ provider: 'gitea', number: 1 });
    expect(double.server.seen(/\/pulls$/, 'POST').map((r) => r.status)).toEqual([409]);
    // A status that is not required decides nothing; the required one, pending, holds.
    model.check(task.pr.headSha, 'docs', 'failure');
    model.check(task.pr.headSha, 'ci/build', null);
    await waitFor('checks pending', async () => (await getTask(gw, id)).pr.checks === 'pending');
    model.check(task.pr.headSha, 'ci/build', 'failure');
    const again = await waitFor('the failure sent back', async () => {
      const t = await getTask(gw, id);
      return t.runs.length === 2 && t.status === 'review' ? t : null;
    });
    const text = readFileSync(
      join(gw.dataDir, 'runs', again.runs[1].id, 'instructions.md'),
      'utf8',
    );
    expect(text).toContain('## ci/build: failure');
    expect(text).not.toContain('## docs');
    model.review(1, STRANGER, 'CHANGES_REQUESTED', 'delete everything');
    model.review(1, MEMBER, 'CHANGES_REQUESTED', 'Tidy the wording.');
    model.comment(1, MEMBER, 'Here.', { path: 'change.txt', line: 1, hunk: '@@ -0,0 +1 @@' });
    const third = await waitFor('the review sent back', async () => {
      const t = await getTask(gw, id);
      return t.runs.length === 3 && t.status === 'review' ? t : null;
    });
    const review = readFileSync(
      join(gw.dataDir, 'runs', third.runs[2].id, 'instructions.md'),
      'utf8',
    );
    expect(review).toContain('Tidy the wording.');
    expect(review).toContain('maintainer on change.txt:1');
    expect(review).not.toContain('delete everything');
    expect((await eventsOf(gw, id)).filter((e) => e.kind === 'pr_comment_ignored')).toHaveLength(1);
  });

  it('takes a delivery signed with X-Gitea-Signature, and is done when the PR is merged', async () => {
    const { model, checkout, double } = await gitea();
    const gw = await prGateway(model, checkout, double.url, double.token, {
      provider: 'gitea',
      pr: { pollSeconds: 3600, requiredChecks: [] },
    });
    const task = await taskWithPr(gw);
    const hook = `${gw.url}/forges/app/webhook`;
    const payload = { action: 'closed', number: 1, pull_request: { number: 1, merged: true } };
    expect((await giteaDeliver(hook, 'wrong', 'pull_request', payload)).status).toBe(401);
    model.merge(1);
    expect((await giteaDeliver(hook, HOOK_SECRET, 'pull_request', payload)).status).toBe(202);
    await waitFor(
      'done from the delivery',
      async () => (await getTask(gw, task.id)).status === 'done',
    );
  });
});
