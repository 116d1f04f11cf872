// Budgets (docs/budgets.md) with the real claude on the Anthropic double, whose answers report the
// usage the test sets: a run ended mid-stream when its printed tokens pass the task's budget, a
// run stopped by claude's own --max-budget-usd, a task never started over its budget, a raise
// that unblocks it. Both engines.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { api, startGateway } from '../helpers/app.js';
import { ENDS_AGENTS, claudeProfile, codexProfile, shellCall } from '../helpers/agents.js';
import { makeRepo } from '../helpers/git.js';
import { anthropicDouble, openaiDouble } from '../helpers/model-doubles.js';
import { createTask, eventsOf, getTask, profile, settledIn } from '../helpers/workers.js';

const fast = { tickSeconds: 0.1, killGraceSeconds: 0.5, failureLimit: 5 };

async function gateway(profiles: Record<string, object>) {
  return startGateway(
    {
      ...ENDS_AGENTS,
      workers: { ...fast, defaultProfile: Object.keys(profiles)[0], profiles },
      workspaces: { repos: { app: { path: makeRepo() } }, minFreeBytes: 0 },
    },
    { dispatch: true },
  );
}

describe('budgets', () => {
  it('end a claude run mid-stream once its printed tokens pass the task’s, keep its work, and run it again once raised', async () => {
    const double = await anthropicDouble();
    // Each answer reports 40,000 input tokens: the third takes the task past 100,000.
    double.script = (_req, turn) =>
      turn < 20
        ? {
            ...shellCall('claude', `echo step ${turn} >> steps.txt; sleep 1`),
            usage: { input: 40_000 },
          }
        : { text: 'all steps done' };
    const gw = await gateway({
      claude: claudeProfile(double, {}, { workspace: 'worktree', repo: 'app' }),
    });
    const { id } = await createTask(gw, { title: 'many steps', budget: { tokens: 100_000 } });
    const blocked = await settledIn(gw, id, 'blocked', 60_000);
    expect(blocked.blockKind).toBe('budget');
    expect(blocked.blockReason).toMatch(/^budget reached \(\d+ of 100000 tokens\)$/);
    const [run] = blocked.runs;
    expect(run.outcome).toBe('budget_exceeded');
    expect(blocked.consecutiveFailures).toBe(0);
    // Stopped where it passed the budget, not at the end of its 20 steps.
    expect(double.requests.length).toBeLessThan(6);
    expect(blocked.spent.tokens).toBeGreaterThanOrEqual(100_000);
    expect(blocked.spent.tokens).toBeLessThan(200_000);
    expect(blocked.spent.runs).toBe(1);
    expect(existsSync(`${blocked.workspace.path}/steps.txt`)).toBe(true);
    const kinds = (await eventsOf(gw, id)).map((e) => e.kind);
    expect(kinds).toContain('budget_warning');
    expect(kinds.indexOf('budget_warning')).toBeLessThan(kinds.indexOf('budget_exceeded'));
    // A raise that is spent already changes nothing.
    const short = await api(gw.url, 'POST', `/tasks/${id}/budget`, { tokens: 100_001 });
    expect(short.status).toBe(400);
    expect((await getTask(gw, id)).status).toBe('blocked');
    double.script = () => ({ text: 'finished the rest' });
    const raised = await api(gw.url, 'POST', `/tasks/${id}/budget`, { tokens: 1_000_000 });
    expect(raised.status).toBe(200);
    expect(raised.body.budget).toEqual({ usd: null, tokens: 1_000_000, runs: null });
    const done = await settledIn(gw, id, 'done', 60_000);
    expect(done.runs.map((r: { outcome: string }) => r.outcome)).toEqual([
      'budget_exceeded',
      'completed',
    ]);
    expect(done.spent.runs).toBe(2);
  });

  it('start claude with what is left of the task’s dollars, and read its own stop there the same way', async () => {
    const double = await anthropicDouble();
    // A million input tokens an answer: far past a cent at any price.
    double.script = () => ({
      ...shellCall('claude', 'echo one step'),
      usage: { input: 1_000_000, output: 100 },
    });
    const gw = await gateway({ claude: claudeProfile(double) });
    const { id } = await createTask(gw, { title: 'costly', budget: { usd: 0.01 } });
    const blocked = await settledIn(gw, id, 'blocked', 60_000);
    expect(blocked.blockKind).toBe('budget');
    expect(blocked.runs[0].outcome).toBe('budget_exceeded');
    expect(blocked.runs[0].agent.usage.costUsd).toBeGreaterThan(0.01);
    expect(blocked.spent.usd).toBeGreaterThan(0.01);
    expect(double.requests.length).toBeLessThanOrEqual(2);
    // Not started again: what it spent is past the budget.
    const reason = blocked.blockReason;
    expect(reason).toMatch(/budget reached/);
  });

  it('never starts a task whose budget is spent, and a raise lets it run', async () => {
    const gw = await gateway({ crashes: profile('exit', {}, '3') });
    const { id } = await createTask(gw, { title: 'flaky', budget: { runs: 2 } });
    const blocked = await settledIn(gw, id, 'blocked', 30_000);
    expect(blocked.blockKind).toBe('budget');
    expect(blocked.blockReason).toBe('budget reached (2 of 2 runs)');
    expect(blocked.runs).toHaveLength(2);
    const events = await eventsOf(gw, id);
    expect(events.find((e) => e.kind === 'budget_reached')?.payload).toEqual({
      reason: 'budget reached (2 of 2 runs)',
      budget: { usd: null, tokens: null, runs: 2 },
      spent: { usd: 0, tokens: 0, runs: 2 },
    });
    const raised = await api(gw.url, 'POST', `/tasks/${id}/budget`, { runs: 3 });
    expect(raised.body.status).toBe('ready');
    const again = await settledIn(gw, id, 'blocked', 30_000);
    expect(again.runs).toHaveLength(3);
    expect(again.blockReason).toBe('budget reached (3 of 3 runs)');
  });

  it('refuses a dollar budget for a kind that prints no cost, changing nothing', async () => {
    const double = await openaiDouble();
    const gw = await gateway({ codex: codexProfile(double) });
    const res = await api(gw.url, 'POST', '/tasks', { title: 'x', budget: { usd: 5 } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(
      /budget: profile "codex" runs codex, which prints no cost/,
    );
    expect((await api(gw.url, 'GET', '/tasks')).body.tasks).toEqual([]);
  });
});
