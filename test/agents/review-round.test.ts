// A review cycle with the real agents (docs/workers.md with docs/agents.md): two rounds of changes, each run
// resuming the same session in the same worktree with the reviewer's text as its prompt, then
// approved. Both kinds, both engines.
import { describe, expect, it } from 'vitest';
import { api, startGateway } from '../helpers/app.js';
import { ENDS_AGENTS, claudeProfile, codexProfile } from '../helpers/agents.js';
import { makeRepo } from '../helpers/git.js';
import { anthropicDouble, openaiDouble } from '../helpers/model-doubles.js';
import { waitFor } from '../helpers/wait.js';
import { createTask, getTask, settledIn } from '../helpers/workers.js';

describe.each(['claude', 'codex'] as const)('%s under review', (kind) => {
  it('takes two rounds of changes in one session, then is approved', async () => {
    const double = kind === 'claude' ? await anthropicDouble() : await openaiDouble();
    let round = 0;
    double.script = () => ({ text: `round ${round}` });
    const make = kind === 'claude' ? claudeProfile : codexProfile;
    const gw = await startGateway(
      {
        ...ENDS_AGENTS,
        workers: {
          tickSeconds: 0.1,
          killGraceSeconds: 0.5,
          defaultProfile: 'agent',
          profiles: {
            agent: make(double, {}, { workspace: 'worktree', repo: 'app', review: true }),
          },
        },
        workspaces: { repos: { app: { path: makeRepo() } }, minFreeBytes: 0 },
      },
      { dispatch: true },
    );
    const { id } = await createTask(gw, { title: 'reviewed by a person' });
    const first = await settledIn(gw, id, 'review', 60_000);
    expect(first.summary).toBe('round 0');
    const session = first.runs[0].agent.sessionId;
    for (const text of ['rename the function', 'and add a test']) {
      round++;
      const sent = await api(gw.url, 'POST', `/tasks/${id}/request-changes`, { text });
      expect(sent.body.status).toBe('ready');
      const again = await waitFor(
        `round ${round} in review`,
        async () => {
          const t = await getTask(gw, id);
          return t.status === 'review' && t.runs.length === round + 1 && t.runs[round].endedAt
            ? t
            : null;
        },
        60_000,
      );
      expect(again.summary).toBe(`round ${round}`);
      expect(again.runs[round].agent).toMatchObject({ resumed: session, sessionId: session });
      expect(again.workspace.path).toBe(first.workspace.path);
      // The resumed prompt is the reviewer's text; the conversation still has the task.
      const last = double.requests.at(-1)!.text;
      expect(last).toContain(text);
      expect(last).toContain('reviewed by a person');
    }
    const approved = await api(gw.url, 'POST', `/tasks/${id}/approve`);
    expect(approved.body.status).toBe('done');
    expect((await getTask(gw, id)).runs).toHaveLength(3);
  });
});
