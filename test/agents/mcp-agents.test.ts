// The real Claude Code and Codex calling gatehouse's MCP tools over the real transport
// (docs/mcp.md), sandboxed as they run by default, their models scripted by the provider doubles:
// a subtask made once though the model asks twice, progress on the card, a question asked from
// a chat answered from that chat, and the same session resumed with the answer. Both engines.
import { describe, expect, it } from 'vitest';
import { api, startGateway, type TestGateway } from '../helpers/app.js';
import {
  ENDS_AGENTS,
  claudeProfile,
  codexProfile,
  gatehouseCall,
  type Kind,
} from '../helpers/agents.js';
import { signedHeaders, webhookReceiver, webhookSecret } from '../helpers/doubles.js';
import { makeRepo } from '../helpers/git.js';
import { anthropicDouble, openaiDouble, type ModelDouble } from '../helpers/model-doubles.js';
import { waitFor } from '../helpers/wait.js';
import { eventsOf, getTask, settledIn } from '../helpers/workers.js';

const SECRET = webhookSecret('an-mcp-agents-webhook-secret');
const fast = { tickSeconds: 0.1, killGraceSeconds: 0.5, failureLimit: 1 };

async function gateway(kind: Kind, double: ModelDouble, receiverUrl: string): Promise<TestGateway> {
  const make = kind === 'claude' ? claudeProfile : codexProfile;
  return startGateway(
    {
      ...ENDS_AGENTS,
      workers: {
        ...fast,
        defaultProfile: 'agent',
        profiles: {
          agent: make(double, {}, { workspace: 'worktree', repo: 'app', mcp: { enabled: true } }),
        },
      },
      workspaces: { repos: { app: { path: makeRepo() } }, minFreeBytes: 0 },
      platforms: [{ name: 'team', type: 'webhook', options: { url: receiverUrl, secret: SECRET } }],
    },
    { dispatch: true },
  );
}

async function say(gw: TestGateway, text: string): Promise<string | null> {
  const body = JSON.stringify({ channel: 'room', text, user: 'dana' });
  const res = await api(
    gw.url,
    'POST',
    '/platform/team/inbound',
    body,
    signedHeaders(SECRET, body),
  );
  expect(res.status).toBe(202);
  return res.body.taskId as string | null;
}

describe.each(['claude', 'codex'] as const)('%s with gatehouse’s MCP tools', (kind) => {
  it('makes one subtask from two calls, reports progress, asks the chat, and resumes its session with the answer', async () => {
    const double = await (kind === 'claude' ? anthropicDouble() : openaiDouble());
    const receiver = await webhookReceiver(SECRET);
    const subtask = { title: 'write the docs', key: 'docs' };
    double.script = (req, turn) => {
      if (req.text.includes('answered your question')) return { text: 'Painted it green.' };
      const steps = [
        gatehouseCall(kind, 'create_subtask', subtask),
        // The model repeats itself: the same subtask comes back.
        gatehouseCall(kind, 'create_subtask', subtask),
        gatehouseCall(kind, 'report_progress', { note: 'subtask made', percent: 40 }),
        gatehouseCall(kind, 'ask_human', { question: 'Blue or green?' }),
      ];
      return steps[turn] ?? { text: 'I asked which colour to use.' };
    };
    const gw = await gateway(kind, double, receiver.url);
    const id = (await say(gw, '/task paint the shed'))!;
    const blocked = await settledIn(gw, id, 'blocked', 90_000);
    expect(blocked).toMatchObject({
      blockKind: 'question',
      question: { text: 'Blue or green?' },
      progress: { note: 'subtask made', percent: 40 },
    });
    const [firstRun] = blocked.runs;
    expect(firstRun.outcome).toBe('completed');
    // Each call reached gatehouse and its answer reached the model: the second call got the
    // subtask the first made, created false.
    const results = double.requests.map((r) => r.text);
    expect(results.some((t) => t.includes('\\"created\\":true'))).toBe(true);
    expect(results.some((t) => t.includes('\\"created\\":false'))).toBe(true);
    const children = (await getTask(gw, id)).children as string[];
    expect(children).toHaveLength(1);
    expect(await getTask(gw, children[0]!)).toMatchObject({
      title: 'write the docs',
      origin: { kind: 'mcp', runId: firstRun.id },
    });
    const events = await eventsOf(gw, id);
    expect(events.some((e) => e.kind === 'mcp_call_cancelled')).toBe(false);
    // The chat that made the task heard the question.
    await waitFor('the chat to hear the question', () =>
      receiver.received.find((m) => m.text.includes(id) && m.text.includes('Blue or green?')),
    );

    await say(gw, `/answer ${id} green, please`);
    const done = await settledIn(gw, id, 'done', 90_000);
    expect(done.summary).toBe('Painted it green.');
    const resumed = done.runs[1];
    expect(resumed.agent.resumed).toBe(firstRun.agent.sessionId);
    const last = double.requests.at(-1)!.text;
    expect(last).toContain('green, please');
    expect(done.question).toBeNull();
  });
});

describe('codex whose own settings refuse a call of gatehouse’s tools', () => {
  it('records the refusal as mcp_call_cancelled naming the setting, and the run is judged as ever', async () => {
    const double = await openaiDouble();
    const receiver = await webhookReceiver(SECRET);
    double.script = (_req, turn) =>
      turn === 0
        ? gatehouseCall('codex', 'add_comment', { text: 'hello' })
        : { text: 'Could not comment.' };
    const gw = await startGateway(
      {
        ...ENDS_AGENTS,
        workers: {
          ...fast,
          defaultProfile: 'agent',
          profiles: {
            agent: codexProfile(
              double,
              // The operator's own flag, after gatehouse's: every call needs an approval.
              { args: ['-c', 'mcp_servers.gatehouse.default_tools_approval_mode="prompt"'] },
              // Unsandboxed, codex runs its own approvals (sandboxed, gatehouse turns them off).
              {
                workspace: 'worktree',
                repo: 'app',
                mcp: { enabled: true },
                sandbox: { kind: 'none' },
              },
            ),
          },
        },
        workspaces: { repos: { app: { path: makeRepo() } }, minFreeBytes: 0 },
        platforms: [
          { name: 'team', type: 'webhook', options: { url: receiver.url, secret: SECRET } },
        ],
      },
      { dispatch: true },
    );
    const id = (await say(gw, '/task say hello'))!;
    const done = await settledIn(gw, id, 'done', 90_000);
    expect(done.summary).toBe('Could not comment.');
    const events = await eventsOf(gw, id);
    expect(events.some((e) => e.kind === 'commented')).toBe(false);
    const cancelled = events.find((e) => e.kind === 'mcp_call_cancelled');
    expect(cancelled?.payload.tool).toBe('add_comment');
    expect(cancelled?.payload.message).toMatch(/requires approval|cancel/);
    expect(cancelled?.payload.message).toContain('docs/mcp.md');
  });
});
