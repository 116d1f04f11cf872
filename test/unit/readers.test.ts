// Reading what an agent printed (docs/agents.md), from agent.jsonl as it grows or whole: the
// final event is the verdict, nothing on the way is; exit codes are not trusted; a cut line,
// garbage and huge lines are passed over.
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentKind } from '../../src/agents/kinds.js';
import { AgentOutput, readAgentOutput } from '../../src/agents/output.js';
import { resetFromMessage } from '../../src/agents/codex.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const file = (lines: unknown[]) => {
  const dir = mkdtempSync(join(tmpdir(), 'gh-agent-'));
  dirs.push(dir);
  const path = join(dir, 'agent.jsonl');
  writeFileSync(
    path,
    lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n',
  );
  return path;
};
const claude = agentKind('claude');
const codex = agentKind('codex');
const result = (extra: object) => ({
  type: 'result',
  subtype: 'success',
  is_error: false,
  result: 'ok',
  session_id: 's-1',
  num_turns: 3,
  total_cost_usd: 0.25,
  usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 7 },
  permission_denials: [],
  ...extra,
});

describe('claude output', () => {
  it('completes on a success result, with its usage and session', () => {
    const r = readAgentOutput(
      file([{ type: 'system', subtype: 'init', session_id: 's-1' }, result({})]),
      claude,
    );
    expect(r).toEqual({
      sessionId: 's-1',
      usage: { inputTokens: 10, outputTokens: 5, cachedTokens: 7, costUsd: 0.25, numTurns: 3 },
      ending: { kind: 'completed', text: 'ok' },
    });
  });

  it.each([
    [
      result({
        permission_denials: [{ tool_name: 'Bash' }, { tool_name: 'Write' }, { tool_name: 'Bash' }],
      }),
      { kind: 'blocked', reason: 'tools refused: Bash, Write' },
    ],
    [
      result({ is_error: true, api_error_status: 429, result: 'API Error: 429' }),
      { kind: 'rate_limited', message: 'API Error: 429', resetAt: null },
    ],
    [
      result({ is_error: true, api_error_status: 401, result: 'Invalid API key' }),
      { kind: 'blocked', reason: "the agent's credentials were refused" },
    ],
    [
      result({ is_error: true, api_error_status: 500, result: 'API Error: 500 boom' }),
      { kind: 'crashed', error: 'API Error: 500 boom' },
    ],
    [
      result({ subtype: 'error_max_turns', is_error: true, result: undefined }),
      { kind: 'blocked', reason: 'max turns reached' },
    ],
    [
      result({
        subtype: 'error_during_execution',
        is_error: true,
        result: undefined,
        errors: ['No conversation found with session ID: x'],
      }),
      { kind: 'session_gone', error: 'No conversation found with session ID: x' },
    ],
  ])('reads %j as %j', (line, ending) => {
    expect(readAgentOutput(file([line]), claude).ending).toEqual(ending);
  });

  it('takes the reset of a rejected rate_limit_event, not of an allowed one', () => {
    const lines = [
      { type: 'rate_limit_event', rate_limit_info: { status: 'allowed', resetsAt: 100 } },
      {
        type: 'rate_limit_event',
        rate_limit_info: { status: 'rejected', resetsAt: 2_000_000_000 },
      },
      result({ is_error: true, result: "You've hit your limit", terminal_reason: 'api_error' }),
    ];
    expect(readAgentOutput(file(lines), claude).ending).toMatchObject({
      kind: 'rate_limited',
      resetAt: 2_000_000_000_000,
    });
  });

  it('forgets a rejected rate_limit_event once a later one says allowed', () => {
    const lines = [
      {
        type: 'rate_limit_event',
        rate_limit_info: { status: 'rejected', resetsAt: 2_000_000_000 },
      },
      { type: 'rate_limit_event', rate_limit_info: { status: 'allowed' } },
      result({ is_error: true, api_error_status: 500, result: 'API Error: 500' }),
    ];
    expect(readAgentOutput(file(lines), claude).ending).toEqual({
      kind: 'crashed',
      error: 'API Error: 500',
    });
    const noReset = [
      { type: 'rate_limit_event', rate_limit_info: { status: 'rejected' } },
      result({ is_error: true, result: 'limited', terminal_reason: 'api_error' }),
    ];
    expect(readAgentOutput(file(noReset), claude).ending).toMatchObject({
      kind: 'rate_limited',
      resetAt: null,
    });
  });

  it('has no verdict before its result: retries and errors on the way are not one', () => {
    const r = readAgentOutput(
      file([
        { type: 'system', subtype: 'api_retry', attempt: 1, error_status: 429 },
        { type: 'rate_limit_event', rate_limit_info: { status: 'allowed' } },
      ]),
      claude,
    );
    expect(r.ending).toBeNull();
  });

  it('reads a file as it grows, a line cut in two once whole, and skips garbage and partial messages', () => {
    const path = file(['not json', '{"type":"stream_event","event":{}}', '[1,2]']);
    const output = new AgentOutput(path, claude);
    expect(output.poll()).toBe(3);
    const line = JSON.stringify(result({ result: 'at last' }));
    appendFileSync(path, line.slice(0, 20));
    expect(output.poll()).toBe(0);
    expect(output.reading().ending).toBeNull();
    appendFileSync(path, `${line.slice(20)}\n`);
    expect(output.poll()).toBe(1);
    expect(output.reading().ending).toEqual({ kind: 'completed', text: 'at last' });
  });

  it('passes over a line of many megabytes without parsing it', () => {
    const path = file([`{"type":"user","x":"${'y'.repeat(5 * 1024 * 1024)}"}`, result({})]);
    expect(readAgentOutput(path, claude).ending).toEqual({ kind: 'completed', text: 'ok' });
  });
});

describe('codex output', () => {
  it('completes on turn.completed with the last message; an error item is no verdict', () => {
    const r = readAgentOutput(
      file([
        { type: 'thread.started', thread_id: 't-1' },
        { type: 'item.completed', item: { type: 'error', message: 'Model metadata not found' } },
        { type: 'item.completed', item: { type: 'agent_message', text: 'first' } },
        { type: 'item.completed', item: { type: 'agent_message', text: 'final words' } },
        {
          type: 'turn.completed',
          usage: { input_tokens: 9, cached_input_tokens: 4, output_tokens: 2 },
        },
      ]),
      codex,
    );
    expect(r).toEqual({
      sessionId: 't-1',
      usage: { inputTokens: 9, outputTokens: 2, cachedTokens: 4, costUsd: null, numTurns: null },
      ending: { kind: 'completed', text: 'final words' },
    });
  });

  it.each([
    ['exceeded retry limit, last status: 429 Too Many Requests', 'rate_limited'],
    ['unexpected status 401 Unauthorized: bad key', 'blocked'],
    ['stream disconnected before completion', 'crashed'],
    ['Your workspace is out of credits.', 'rate_limited'],
  ])('reads turn.failed "%s" as %s', (message, kind) => {
    const r = readAgentOutput(
      file([
        { type: 'error', message },
        { type: 'turn.failed', error: { message } },
      ]),
      codex,
    );
    expect(r.ending?.kind).toBe(kind);
  });

  it('names a call of gatehouse’s tools its own approval rules refused (recorded from codex 0.171.0)', () => {
    const recorded = join(
      import.meta.dirname,
      '..',
      'fixtures',
      'transcripts',
      'codex-mcp-refused.jsonl',
    );
    const reading = readAgentOutput(recorded, codex);
    expect(reading.cancelledCalls).toEqual([
      {
        tool: 'get_task',
        message: 'MCP tool call requires approval, but approval policy is never',
      },
    ]);
    // The refusal is no verdict: the turn still completes.
    expect(reading.ending).toEqual({ kind: 'completed', text: 'finished' });
  });

  it('finds a lost session on its error stream only', () => {
    expect(
      codex.endingFromLog('Error: thread/resume failed: no rollout found for thread id x'),
    ).toMatchObject({ kind: 'session_gone' });
    expect(codex.endingFromLog('WARNING: proceeding')).toBeNull();
  });

  it('reads the reset time of a usage-limit message in local time', () => {
    const now = new Date(2026, 11, 2, 20, 0, 30);
    expect(resetFromMessage('try again at 8:15 PM.', now)).toBe(
      new Date(2026, 11, 2, 20, 15).getTime(),
    );
    // Past today: tomorrow's.
    expect(resetFromMessage('or try again at 3:30 AM.', now)).toBe(
      new Date(2026, 11, 3, 3, 30).getTime(),
    );
    expect(resetFromMessage('try again at 12:05 AM', now)).toBe(
      new Date(2026, 11, 3, 0, 5).getTime(),
    );
    expect(resetFromMessage('try again in 3 minutes', now)).toBe(now.getTime() + 180_000);
    // Another day's reset says its date.
    expect(resetFromMessage('or try again at Dec 29th, 2026 10:15 PM.', now)).toBe(
      new Date(2026, 11, 29, 22, 15).getTime(),
    );
    expect(resetFromMessage('try again at Jan 2nd, 2027 9:05 AM', now)).toBe(
      new Date(2027, 0, 2, 9, 5).getTime(),
    );
    expect(resetFromMessage('try again at 13:05 PM', now)).toBeNull();
    expect(resetFromMessage('try again later', now)).toBeNull();
  });
});
