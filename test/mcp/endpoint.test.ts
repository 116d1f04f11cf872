// gatehouse's MCP endpoint over its real transport (docs/mcp.md), driven by the official SDK's
// client: a run's own token gets its task's tools while the run lives and a readable refusal
// after; the API token gets the operator's tools; anything else is refused as the API refuses it.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { api, startGateway, type TestGateway } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';

const TOKEN = 'an-api-token-for-the-mcp-tests-0123';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const fast = { tickSeconds: 0.1, killGraceSeconds: 0.3, failureLimit: 2, maxConcurrent: 10 };

/**
 * A worker that writes its MCP token to RUN_DIR/token, waits for RUN_DIR/go, then reports done
 * (its run's completion is what a question blocks).
 */
const talker = (extra: object = {}) => ({
  command: [
    '/bin/sh',
    '-c',
    `printf %s "$GATEHOUSE_MCP_TOKEN" > "$GATEHOUSE_RUN_DIR/token"; while [ ! -e "$GATEHOUSE_RUN_DIR/go" ]; do sleep 0.05; done; printf '{"status":"done","summary":"talked"}' > "$GATEHOUSE_RUN_DIR/result.json"`,
  ],
  mcp: { enabled: true, assignees: ['helper'], maxSubtasksPerRun: 3 },
  ...extra,
});

async function gateway(): Promise<TestGateway> {
  return startGateway(
    {
      api: { token: TOKEN },
      workers: {
        ...fast,
        defaultProfile: 'talker',
        profiles: {
          talker: talker(),
          helper: talker({ mcp: { enabled: false }, approval: 'before_run' }),
          quiet: talker({ mcp: { enabled: false } }),
        },
      },
    },
    { dispatch: true },
  );
}

const createTask = async (gw: TestGateway, body: object) =>
  (await api(gw.url, 'POST', '/tasks', body, AUTH)).body as { id: string };
const getTask = async (gw: TestGateway, id: string) =>
  (await api(gw.url, 'GET', `/tasks/${id}`, undefined, AUTH)).body;
const eventsOf = async (gw: TestGateway, id: string) =>
  (await api(gw.url, 'GET', `/tasks/${id}/events`, undefined, AUTH)).body.events as {
    kind: string;
    runId: string | null;
    payload: any;
  }[];
const settledIn = (gw: TestGateway, id: string, status: string) =>
  waitFor(`task ${id} to settle in ${status}`, async () => {
    const t = await getTask(gw, id);
    return t.status === status && t.runs.every((r: { endedAt: number | null }) => r.endedAt)
      ? t
      : null;
  });

async function connect(gw: TestGateway, token: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

type Result = { content: { type: string; text: string }[]; isError?: boolean };
const textOf = (r: unknown) => (r as Result).content[0]!.text;
const jsonOf = (r: unknown) => JSON.parse(textOf(r));

/** The running task's run and the MCP token its worker was given. */
async function runningToken(
  gw: TestGateway,
  id: string,
): Promise<{ runId: string; token: string }> {
  return waitFor(`task ${id}'s worker to have its token`, async () => {
    const task = await getTask(gw, id);
    const run = task.runs.at(-1);
    const file = run && join(gw.dataDir, 'runs', run.id, 'token');
    return file && existsSync(file) && readFileSync(file, 'utf8')
      ? { runId: run.id as string, token: readFileSync(file, 'utf8') }
      : null;
  });
}

const go = (gw: TestGateway, runId: string) =>
  writeFileSync(join(gw.dataDir, 'runs', runId, 'go'), '');

describe('the MCP endpoint', () => {
  it('gives a run its task’s tools: subtasks made once, allow-listed, capped; progress; a question that blocks its completion', async () => {
    const gw = await gateway();
    const { id } = await createTask(gw, { title: 'split this up', body: 'into parts' });
    const { runId, token } = await runningToken(gw, id);
    // The token the worker got is its run's own, not the run token.
    expect(token).toMatch(new RegExp(`^gmcp_${runId}_`));
    const agent = await connect(gw, token);
    const names = (await agent.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual([
      'add_comment',
      'ask_human',
      'create_subtask',
      'get_task',
      'list_tasks',
      'report_progress',
    ]);
    const own = jsonOf(await agent.callTool({ name: 'get_task', arguments: {} }));
    expect(own.task).toMatchObject({ id, title: 'split this up', body: 'into parts' });

    // The model repeats itself: one subtask.
    const args = { title: 'part one', key: 'p1' };
    const first = jsonOf(await agent.callTool({ name: 'create_subtask', arguments: args }));
    const again = jsonOf(await agent.callTool({ name: 'create_subtask', arguments: args }));
    expect(first.created).toBe(true);
    expect(again).toEqual({ ...first, created: false });
    // Without a key, the same title and body are the same subtask.
    const plain = { title: 'part two', body: 'b' };
    const two = jsonOf(await agent.callTool({ name: 'create_subtask', arguments: plain }));
    expect(jsonOf(await agent.callTool({ name: 'create_subtask', arguments: plain })).task.id).toBe(
      two.task.id,
    );
    const child = await getTask(gw, first.task.id);
    expect(child).toMatchObject({
      parents: [id],
      status: 'todo',
      assignee: 'talker',
      origin: { kind: 'mcp', runId },
    });
    // An assignee outside mcp.assignees: a tool error the model can read, nothing made.
    const refused = await agent.callTool({
      name: 'create_subtask',
      arguments: { title: 'x', assignee: 'quiet' },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('assignee "quiet" is not allowed');
    // One allowed is gated by its own profile's approval; a join after the first two.
    const joined = jsonOf(
      await agent.callTool({
        name: 'create_subtask',
        arguments: { title: 'join', assignee: 'helper', after: [first.task.id, two.task.id] },
      }),
    );
    expect(await getTask(gw, joined.task.id)).toMatchObject({
      parents: [id, first.task.id, two.task.id],
      awaiting: 'approval',
      approval: { approvedRevision: null },
    });
    // maxSubtasksPerRun is 3: the fourth is refused.
    const capped = await agent.callTool({ name: 'create_subtask', arguments: { title: 'four' } });
    expect(textOf(capped)).toContain('maxSubtasksPerRun');
    // A bad argument is named.
    const bad = await agent.callTool({ name: 'report_progress', arguments: { percent: 200 } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/note|percent/);

    await agent.callTool({ name: 'report_progress', arguments: { note: 'half way', percent: 50 } });
    await agent.callTool({ name: 'add_comment', arguments: { text: 'made three parts' } });
    expect((await getTask(gw, id)).progress).toMatchObject({
      note: 'half way',
      percent: 50,
      runId,
    });
    const asked = await agent.callTool({
      name: 'ask_human',
      arguments: { question: 'Blue or green?', options: ['blue', 'green'] },
    });
    expect(asked.isError).toBeFalsy();
    go(gw, runId);
    const blocked = await settledIn(gw, id, 'blocked');
    expect(blocked).toMatchObject({
      blockKind: 'question',
      blockReason: 'question: Blue or green?',
      question: { text: 'Blue or green?', options: ['blue', 'green'], runId },
    });
    const events = await eventsOf(gw, id);
    expect(events.find((e) => e.kind === 'commented')).toMatchObject({
      runId,
      payload: { text: 'made three parts', via: 'mcp', author: 'agent:talker' },
    });
    expect(events.find((e) => e.kind === 'question_asked')?.payload).toEqual({
      question: 'Blue or green?',
      options: ['blue', 'green'],
    });

    // Its run has ended: the same token gets a readable refusal, never a failed request.
    const late = await agent.callTool({ name: 'get_task', arguments: {} });
    expect(late.isError).toBe(true);
    expect(textOf(late)).toContain('this run has ended');

    // The answer sends it back to its agent with the answer as instructions.
    const answered = await api(gw.url, 'POST', `/tasks/${id}/answer`, { text: 'green' }, AUTH);
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ status: 'ready', question: null, blockKind: null });
    expect(answered.body.instructions).toContain('green');
    await agent.close();
  });

  it('gives the API token the operator’s tools, and refuses no token, a foreign page and an unknown protocol version', async () => {
    const gw = await gateway();
    const operator = await connect(gw, TOKEN);
    const names = (await operator.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(
      [
        'answer',
        'approve',
        'archive',
        'add_comment',
        'create_task',
        'follow_up',
        'get_task',
        'list_tasks',
        'request_changes',
      ].sort(),
    );
    const made = jsonOf(
      await operator.callTool({
        name: 'create_task',
        arguments: { title: 'from my own agent', assignee: 'quiet' },
      }),
    );
    expect((await getTask(gw, made.id)).origin).toEqual({ kind: 'api' });
    const listed = jsonOf(await operator.callTool({ name: 'list_tasks', arguments: {} }));
    expect(listed.tasks.map((t: { id: string }) => t.id)).toContain(made.id);
    const missing = await operator.callTool({
      name: 'get_task',
      arguments: { id: 't_000000000000' },
    });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain('TASK_NOT_FOUND');
    await operator.close();

    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'raw', version: '1' },
      },
    };
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const post = (h: Record<string, string>, body: unknown = init) =>
      fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { ...headers, ...h },
        body: JSON.stringify(body),
      });
    expect((await post({})).status).toBe(401);
    expect((await post({ authorization: 'Bearer gmcp_r_000000000000_forged' })).status).toBe(401);
    expect((await post({ ...AUTH, origin: 'http://evil.example' })).status).toBe(403);
    const newer = await post(
      { ...AUTH, 'mcp-protocol-version': '2026-07-28' },
      { jsonrpc: '2.0', id: 2, method: 'server/discover' },
    );
    expect(newer.status).toBe(400);
    expect((await post(AUTH)).status).toBe(200);
    const get = await fetch(`${gw.url}/mcp`, { headers: AUTH });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    // Nothing was made by any of it.
    expect((await api(gw.url, 'GET', '/tasks', undefined, AUTH)).body.tasks).toHaveLength(1);
  });
});
