// A forge in trouble changes nothing (docs/pull-requests.md): a refused token, a rate limit and
// an outage are events with backoff, never transitions; polling alone (conditional requests)
// catches what a lost delivery would have said; rounds run out; someone else's push is kept.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { api } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';
import { gitOut } from '../helpers/git.js';
import { githubDeliver, githubDouble, type GithubDouble } from '../helpers/forges/github.js';
import { ForgeModel, MEMBER } from '../helpers/forges/model.js';
import { waitFor } from '../helpers/wait.js';
import { eventsOf, getTask } from '../helpers/workers.js';
import { HOOK_SECRET, prGateway, taskWithPr } from './setup.js';

const doubles: GithubDouble[] = [];
afterEach(async () => {
  for (const d of doubles.splice(0)) await d.close();
});

async function github() {
  const { model, checkout } = ForgeModel.withRepository();
  const double = await githubDouble(model);
  doubles.push(double);
  return { model, checkout, double };
}

describe('a forge in trouble', () => {
  it('says a refused token in events and /ready, moves nothing, and carries on once it works', async () => {
    const { model, checkout, double } = await github();
    const gw = await prGateway(model, checkout, double.url, double.token, {
      pr: { requiredChecks: [] },
    });
    const task = await taskWithPr(gw);
    double.server.fail({
      path: /\/pulls\/1$/,
      status: 401,
      body: { message: 'Bad credentials' },
      times: 1,
    });
    const failed = await waitFor('the failure recorded', async () =>
      (await eventsOf(gw, task.id)).find((e) => e.kind === 'pr_sync_failed'),
    );
    expect(failed.payload).toMatchObject({ reason: 'auth', status: 401 });
    const ready = (await api(gw.url, 'GET', '/ready')).body;
    expect(ready.subsystems['forge:app']).toMatchObject({ status: 'down' });
    expect((await getTask(gw, task.id)).status).toBe('review');
    model.merge(1);
    await waitFor(
      'done once the forge answers again',
      async () => (await getTask(gw, task.id)).status === 'done',
    );
    expect((await api(gw.url, 'GET', '/ready')).body.subsystems['forge:app']).toEqual({
      status: 'ok',
    });
  });

  it("waits out a rate limit's retry-after before asking again, and backs off from a 5xx", async () => {
    const { model, checkout, double } = await github();
    const gw = await prGateway(model, checkout, double.url, double.token, {
      pr: { requiredChecks: [] },
    });
    const task = await taskWithPr(gw);
    double.server.fail({
      path: /\/pulls\/1$/,
      status: 429,
      headers: { 'retry-after': '3', 'x-ratelimit-remaining': '0' },
      body: { message: 'API rate limit exceeded' },
    });
    const limited = await waitFor('the rate limit seen', async () => {
      const hit = double.server.requests.findIndex((r) => r.status === 429);
      return hit >= 0 ? { index: hit, at: Date.now() } : null;
    });
    const next = await waitFor(
      'the next request to the forge',
      async () => {
        const after = double.server.requests.slice(limited.index + 1);
        return after.length > 0 ? Date.now() : null;
      },
      20_000,
    );
    expect(next - limited.at).toBeGreaterThanOrEqual(2500);
    expect(
      (await eventsOf(gw, task.id)).find((e) => e.kind === 'pr_sync_failed')?.payload,
    ).toMatchObject({
      reason: 'rate_limited',
      status: 429,
    });
    double.server.fail({
      path: /\/pulls\/1$/,
      status: 502,
      body: { message: 'Bad Gateway' },
      times: 2,
    });
    model.merge(1);
    await waitFor(
      'done after the outage',
      async () => (await getTask(gw, task.id)).status === 'done',
      30_000,
    );
    const statuses = double.server.seen(/\/pulls\/1$/).map((r) => r.status);
    expect(statuses).toEqual(expect.arrayContaining([502, 502, 200]));
  });

  it('polls with conditional requests, counting each 304 apart, and sees a merge without a delivery', async () => {
    const { model, checkout, double } = await github();
    const gw = await prGateway(model, checkout, double.url, double.token, {
      pr: { requiredChecks: [] },
    });
    const task = await taskWithPr(gw);
    await waitFor(
      'polls answered 304',
      async () => double.server.seen(/\/pulls\/1$/).filter((r) => r.status === 304).length >= 2,
    );
    const polls = double.server.seen(/\/pulls\/1$/);
    expect(polls.filter((r) => r.status === 304).every((r) => r.ifNoneMatch !== null)).toBe(true);
    const metrics = (await api(gw.url, 'GET', '/metrics')).body as string;
    expect(metrics).toMatch(
      /gatehouse_forge_requests_total\{provider="github",outcome="not_modified"\} [1-9]/,
    );
    model.merge(1);
    await waitFor(
      'done by polling alone',
      async () => (await getTask(gw, task.id)).status === 'done',
    );
  });
});

describe('feedback rounds and other people', () => {
  it('blocks the task instead of starting a round past maxRounds', async () => {
    const { model, checkout, double } = await github();
    const gw = await prGateway(model, checkout, double.url, double.token, {
      pr: { requiredChecks: [], feedback: { maxRounds: 1, debounceSeconds: 0 } },
    });
    const task = await taskWithPr(gw);
    model.comment(1, MEMBER, 'first round');
    await waitFor('round 1 answered', async () => {
      const t = await getTask(gw, task.id);
      return t.runs.length === 2 && t.status === 'review' && t.pr.rounds === 1;
    });
    model.comment(1, MEMBER, 'second round');
    const blocked = await waitFor('blocked', async () => {
      const t = await getTask(gw, task.id);
      return t.status === 'blocked' ? t : null;
    });
    expect(blocked.blockReason).toBe('PR feedback rounds exhausted (1)');
    expect(blocked.runs).toHaveLength(2);
  });

  it("fast-forwards a person's push into the worktree before the next run, and never forces over it", async () => {
    const { model, checkout, double } = await github();
    const hold = join(tempDir(), 'hold');
    const gw = await prGateway(model, checkout, double.url, double.token, {
      pr: { requiredChecks: [], feedback: { debounceSeconds: 0 } },
      env: { HOLD: hold },
    });
    const task = await taskWithPr(gw);
    const branch = `gatehouse/${task.id}`;
    const human = model.pushAs(branch, { 'HUMAN.md': 'a person wrote this\n' });
    model.comment(1, MEMBER, 'keep going');
    // In review once its run settles; its PR's head moves once that run's work is published
    // (a moment later): waited for past both the first run's head and the person's.
    const again = await waitFor('the next run in review, published', async () => {
      const t = await getTask(gw, task.id);
      return t.runs.length === 2 &&
        t.status === 'review' &&
        t.pr.headSha !== human &&
        t.pr.headSha !== task.pr.headSha
        ? t
        : null;
    });
    // The person's commit is in the branch's history on origin, below the agent's.
    expect(gitOut(model.bare, 'merge-base', '--is-ancestor', human, again.pr.headSha)).toBe('');
    expect(readFileSync(join(again.workspace.path, 'HUMAN.md'), 'utf8')).toBe(
      'a person wrote this\n',
    );
    // Now the remote moves on while the next run works: its push is refused, not forced.
    writeFileSync(hold, '');
    model.comment(1, MEMBER, 'one more thing');
    // Its worker has started (it writes token-seen first): origin was read before its spawn.
    await waitFor('the third run working', async () => {
      const t = await getTask(gw, task.id);
      const run = t.runs[2];
      return run && existsSync(join(gw.dataDir, 'runs', run.id, 'token-seen'));
    });
    const late = model.pushAs(branch, { 'LATE.md': 'pushed during the run\n' });
    rmSync(hold);
    const blocked = await waitFor('blocked on the refused push', async () => {
      const t = await getTask(gw, task.id);
      return t.status === 'blocked' ? t : null;
    });
    expect(blocked.blockReason).toMatch(/^push_rejected/);
    expect(model.headSha(branch)).toBe(late);
    const failed = (await eventsOf(gw, task.id)).find((e) => e.kind === 'pr_sync_failed');
    expect(failed?.payload.reason).toBe('push_rejected');
  });

  it('is done once checks pass for 30 s on one head with doneWhen checks_passed, and none never passes', async () => {
    const { model, checkout, double } = await github();
    const gw = await prGateway(model, checkout, double.url, double.token, {
      pr: { doneWhen: 'checks_passed', noChecksSeconds: 1 },
    });
    const task = await taskWithPr(gw);
    await waitFor(
      'no checks reported',
      async () => (await getTask(gw, task.id)).pr.checks === 'none',
    );
    expect((await getTask(gw, task.id)).status).toBe('review');
    // A check after `none`: the forge's check_run delivery says so (polling reads the checks of
    // a settled PR every half hour).
    const check = model.check(task.pr.headSha, 'ci', 'success');
    const delivered = await githubDeliver(
      `${gw.url}/forges/app/webhook`,
      HOOK_SECRET,
      'check_run',
      {
        action: 'completed',
        check_run: { id: check.id, head_sha: task.pr.headSha, pull_requests: [{ number: 1 }] },
      },
    );
    expect(delivered.body.tasks).toEqual([task.id]);
    const done = await waitFor(
      'done after the hold',
      async () => {
        const t = await getTask(gw, task.id);
        return t.status === 'done' ? t : null;
      },
      60_000,
    );
    expect(done.pr).toMatchObject({ state: 'open', checks: 'passing' });
    const passed = (await eventsOf(gw, task.id)).find((e) => e.kind === 'pr_checks_passed');
    expect(passed?.payload.headSha).toBe(task.pr.headSha);
  }, 90_000);
});
