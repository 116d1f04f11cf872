// Pull requests with the real agents (docs/pull-requests.md with docs/agents.md): the agent's
// work opened as a PR, a failing check's log sent back to the same session, which fixes it, and
// the task done once merged. Both kinds, both engines.
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../helpers/app.js';
import { ENDS_AGENTS, claudeProfile, codexProfile, shellCall } from '../helpers/agents.js';
import { gitOut } from '../helpers/git.js';
import { githubDouble, type GithubDouble } from '../helpers/forges/github.js';
import { ForgeModel } from '../helpers/forges/model.js';
import { anthropicDouble, openaiDouble } from '../helpers/model-doubles.js';
import { waitFor } from '../helpers/wait.js';
import { createTask, eventsOf, getTask } from '../helpers/workers.js';

const forges: GithubDouble[] = [];
afterEach(async () => {
  for (const f of forges.splice(0)) await f.close();
});

describe.each(['claude', 'codex'] as const)('%s with a pull request', (kind) => {
  it("opens the agent's work as a PR, sends a failing check's log back to its session, and is done when merged", async () => {
    const { model, checkout } = ForgeModel.withRepository();
    const forge = await githubDouble(model);
    forges.push(forge);
    const double = kind === 'claude' ? await anthropicDouble() : await openaiDouble();
    // First a file written by the agent's shell tool, then its answer. A follow-up whose prompt
    // carries the check's log writes the fix the log asks for.
    double.script = (req, turn) => {
      if (req.text.includes('ReferenceError: answer is not defined'))
        return req.text.includes('export const answer = 42;')
          ? { text: 'defined answer' }
          : shellCall(kind, 'echo "export const answer = 42;" > src/answer.js');
      return turn === 0
        ? shellCall(kind, 'echo "console.log(answer);" > src/main.js')
        : { text: 'wrote main.js' };
    };
    const make = kind === 'claude' ? claudeProfile : codexProfile;
    const gw = await startGateway(
      {
        ...ENDS_AGENTS,
        workers: {
          tickSeconds: 0.1,
          killGraceSeconds: 0.5,
          defaultProfile: 'agent',
          profiles: { agent: make(double, {}, { workspace: 'worktree', repo: 'app' }) },
        },
        workspaces: {
          minFreeBytes: 0,
          repos: {
            app: {
              path: checkout,
              base: 'main',
              pr: {
                provider: 'github',
                api: forge.url,
                project: model.project,
                tokenEnv: 'FORGE_TOKEN',
                pollSeconds: 1,
                requiredChecks: ['test'],
              },
            },
          },
        },
      },
      { dispatch: true, env: { FORGE_TOKEN: forge.token } },
    );
    const { id } = await createTask(gw, { title: 'print the answer' });
    const first = await waitFor(
      'the PR opened',
      async () => {
        const t = await getTask(gw, id);
        return t.pr ? t : null;
      },
      90_000,
    );
    const session = first.runs[0].agent.sessionId;
    expect(gitOut(model.bare, 'show', `${first.pr.headSha}:src/main.js`)).toBe(
      'console.log(answer);',
    );
    model.check(
      first.pr.headSha,
      'test',
      'failure',
      'node src/main.js\nReferenceError: answer is not defined',
    );
    const fixed = await waitFor(
      'the fix pushed to the PR',
      async () => {
        const t = await getTask(gw, id);
        return t.status === 'review' && t.runs.length === 2 && t.pr.headSha !== first.pr.headSha
          ? t
          : null;
      },
      90_000,
    );
    expect(fixed.runs[1].agent).toMatchObject({ resumed: session, sessionId: session });
    expect(double.requests.at(-1)!.text).toContain('ReferenceError: answer is not defined');
    expect(gitOut(model.bare, 'show', `${fixed.pr.headSha}:src/answer.js`)).toBe(
      'export const answer = 42;',
    );
    expect(model.prs).toHaveLength(1);
    model.check(fixed.pr.headSha, 'test', 'success');
    model.merge(1);
    await waitFor(
      'done once merged',
      async () => (await getTask(gw, id)).status === 'done',
      30_000,
    );
    const kinds = (await eventsOf(gw, id)).map((e) => e.kind);
    expect(kinds.filter((k) => k === 'pr_feedback')).toHaveLength(1);
  }, 240_000);
});
