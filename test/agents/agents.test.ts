// Coding agents as workers (docs/agents.md), with the real `claude` and `codex` programs the suite
// installed, each against a local double of its provider's streaming API. The verdict comes from
// what the agent printed; a rate limit holds the profile; silence ends a run. Both engines.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, startGateway } from '../helpers/app.js';
import {
  ENDS_AGENTS,
  claudeProfile,
  codexProfile,
  shellCall,
  type Kind,
} from '../helpers/agents.js';
import { makeRepo } from '../helpers/git.js';
import { anthropicDouble, openaiDouble, type ModelDouble } from '../helpers/model-doubles.js';
import { waitFor } from '../helpers/wait.js';
import { createTask, eventsOf, getTask, settledIn } from '../helpers/workers.js';

const fast = { tickSeconds: 0.1, killGraceSeconds: 0.5, failureLimit: 2 };

async function doubleFor(kind: Kind): Promise<ModelDouble> {
  return kind === 'claude' ? anthropicDouble() : openaiDouble();
}

function profileFor(
  kind: Kind,
  double: ModelDouble,
  agent: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) {
  const make = kind === 'claude' ? claudeProfile : codexProfile;
  return make(double, agent, { workspace: 'worktree', repo: 'app', ...extra });
}

async function gateway(profiles: Record<string, object>, workers: object = {}) {
  return startGateway(
    {
      ...ENDS_AGENTS,
      workers: { ...fast, ...workers, defaultProfile: Object.keys(profiles)[0], profiles },
      workspaces: { repos: { app: { path: makeRepo() } }, minFreeBytes: 0 },
    },
    { dispatch: true },
  );
}

describe.each(['claude', 'codex'] as const)('%s as a worker', (kind) => {
  it('does the task in its worktree and ends done, judged by what it printed', async () => {
    const double = await doubleFor(kind);
    // The tool writes a file and the environment the agent's tools see.
    double.script = (_req, turn) =>
      turn === 0
        ? shellCall(kind, 'echo changed > feature.txt && env > tool-env.txt')
        : { text: 'Wrote feature.txt.' };
    const gw = await gateway({ agent: profileFor(kind, double) });
    // Past one argument's limit (128 KiB): it goes on stdin, whole.
    const body = `Make feature.txt.\n${'é'.repeat(90_000)}\nend of body`;
    expect(Buffer.byteLength(body)).toBeGreaterThan(128 * 1024);
    const { id } = await createTask(gw, { title: 'add the feature', body });
    const done = await settledIn(gw, id, 'done', 60_000);
    expect(done.summary).toBe('Wrote feature.txt.');
    const run = done.runs[0];
    expect(run.outcome).toBe('completed');
    expect(run.agent).toMatchObject({ kind, resumed: null, resumeFailed: false });
    expect(run.agent.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(run.agent.usage.inputTokens).toBeGreaterThan(0);
    expect(run.agent.usage.outputTokens).toBeGreaterThan(0);
    expect(done.result).toMatchObject({
      text: 'Wrote feature.txt.',
      sessionId: run.agent.sessionId,
    });
    expect(done.usage.outputTokens).toBe(run.agent.usage.outputTokens);
    // The prompt reached the model whole: title, body past the argv limit, the workspace.
    const first = double.requests[0]!.text;
    expect(first).toContain('add the feature');
    // (as JSON in the request; a boolean, so a miss does not print 200 KB)
    expect(first.includes(JSON.stringify(body).slice(1, -1))).toBe(true);
    expect(first).toContain(done.workspace.path);
    expect(readFileSync(join(done.workspace.path, 'feature.txt'), 'utf8')).toBe('changed\n');
    // Its tools saw no run token, no daemon URL; codex's tools not even the provider's key.
    const toolEnv = readFileSync(join(done.workspace.path, 'tool-env.txt'), 'utf8');
    expect(toolEnv).not.toMatch(/GATEHOUSE_RUN_TOKEN|GATEHOUSE_URL|GATEHOUSE_TOKEN/);
    expect(toolEnv).toContain(`GATEHOUSE_TASK_ID=${id}`);
    if (kind === 'codex') expect(toolEnv).not.toContain('sk-double-key');
    expect(existsSync(join(gw.dataDir, 'runs', run.id, 'agent.jsonl'))).toBe(true);
    expect(run.workspace.filesChanged).toBe(2);
  });

  it('holds its profile on a 429 until released, then runs it again; other profiles carry on', async () => {
    const double = await doubleFor(kind);
    const other = await doubleFor(kind);
    let limited = true;
    double.script = () =>
      limited
        ? { status: 429, headers: { 'retry-after': '0' }, message: 'Rate limit reached' }
        : { text: 'done after the limit' };
    other.script = () => ({ text: 'the other profile ran' });
    const gw = await gateway(
      { agent: profileFor(kind, double), spare: profileFor(kind, other) },
      { rateLimitCooldownSeconds: 3600 },
    );
    const { id } = await createTask(gw, { title: 'limited' });
    const held = await waitFor(
      'the profile held',
      async () => {
        const w = (await api(gw.url, 'GET', '/workers')).body;
        return w.holds.length > 0 ? w.holds : null;
      },
      60_000,
    );
    expect(held).toMatchObject([{ profile: 'agent' }]);
    expect(held[0].until).toBeGreaterThan(Date.now() + 3000_000);
    const task = await settledIn(gw, id, 'ready', 30_000);
    expect(task.runs[0].outcome).toBe('rate_limited');
    expect(task.runs[0].error).toMatch(/429|rate limit/i);
    expect(task.consecutiveFailures).toBe(0);
    const events = await eventsOf(gw, id);
    expect(events.find((e) => e.kind === 'profile_held')?.payload).toMatchObject({
      profile: 'agent',
    });
    // Held: a second task of the profile waits (the provider hears nothing more); one of
    // another profile runs.
    const asked = double.requests.length;
    const { id: second } = await createTask(gw, { title: 'also limited' });
    const { id: elsewhere } = await createTask(gw, { title: 'other', assignee: 'spare' });
    await settledIn(gw, elsewhere, 'done', 60_000);
    expect((await getTask(gw, second)).runs).toHaveLength(0);
    expect(double.requests.length).toBe(asked);
    limited = false;
    const released = await api(gw.url, 'POST', '/profiles/agent/release');
    expect(released).toMatchObject({ status: 200, body: { profile: 'agent', released: true } });
    await settledIn(gw, id, 'done', 60_000);
    await settledIn(gw, second, 'done', 60_000);
    expect((await api(gw.url, 'GET', '/workers')).body.holds).toEqual([]);
    const again = await api(gw.url, 'POST', '/profiles/agent/release');
    expect(again.body.released).toBe(false);
    expect((await api(gw.url, 'POST', '/profiles/nobody/release')).status).toBe(404);
  });

  it('blocks when the provider refuses its credentials', async () => {
    const double = await doubleFor(kind);
    double.script = () => ({ status: 401, message: 'invalid x-api-key' });
    const gw = await gateway({ agent: profileFor(kind, double) });
    const { id } = await createTask(gw, { title: 'no key' });
    const task = await settledIn(gw, id, 'blocked', 60_000);
    expect(task.blockReason).toBe("the agent's credentials were refused");
    expect(task.runs).toHaveLength(1);
  });

  it('ends an agent that prints nothing as timed out', async () => {
    const double = await doubleFor(kind);
    double.script = () => ({ hang: true });
    const gw = await gateway({ agent: profileFor(kind, double, { idleTimeoutSeconds: 3 }) });
    const { id } = await createTask(gw, { title: 'silent' });
    const task = await waitFor(
      'a timed-out run',
      async () => {
        const t = await getTask(gw, id);
        return t.runs[0]?.outcome ? t : null;
      },
      60_000,
    );
    expect(task.runs[0].outcome).toBe('timed_out');
    expect(task.runs[0].error).toContain('no output for 3 s');
    double.release();
  });

  it('resumes its session on a follow-up, and starts afresh when the session is gone', async () => {
    const double = await doubleFor(kind);
    double.script = () => ({ text: 'did it' });
    const profile = profileFor(kind, double);
    const gw = await gateway({ agent: profile });
    const { id } = await createTask(gw, { title: 'remember me' });
    const first = await settledIn(gw, id, 'done', 60_000);
    const session = first.runs[0].agent.sessionId;
    const followUp = async (text: string, runs: number) => {
      await api(gw.url, 'POST', `/tasks/${id}/follow-up`, { text });
      return waitFor(
        `run ${runs} done`,
        async () => {
          const t = await getTask(gw, id);
          return t.status === 'done' && t.runs.length === runs ? t : null;
        },
        60_000,
      );
    };
    const second = await followUp('now the second part', 2);
    expect(second.runs[1].agent).toMatchObject({ resumed: session, sessionId: session });
    // The resumed conversation carries the first turn; the new prompt is the instructions.
    const resumed = double.requests.at(-1)!.text;
    expect(resumed).toContain('remember me');
    expect(resumed).toContain('now the second part');
    // The agent's own session store is lost: the run says so, a fresh session does the task.
    rmSync(join(profile.env.HOME, kind === 'claude' ? '.claude/projects' : 'sessions'), {
      recursive: true,
      force: true,
    });
    const fresh = await followUp('and a third part', 4);
    expect(fresh.runs[2]).toMatchObject({ outcome: 'interrupted' });
    expect(fresh.runs[2].agent).toMatchObject({ resumed: session, resumeFailed: true });
    expect(fresh.runs[3].agent.resumed).toBeNull();
    expect(fresh.runs[3].agent.sessionId).not.toBe(session);
    const events = await eventsOf(gw, id);
    expect(events.find((e) => e.kind === 'session_resume_failed')?.payload.sessionId).toBe(session);
    const whole = double.requests.at(-1)!.text;
    expect(whole).toContain('# Task');
    expect(whole).toContain('and a third part');
  });
});
