// A run's transcript, read by each kind from what the real CLI printed (transcripts recorded from
// claude 2.1.332 and codex 0.171.0 running a command, gatehouse's progress tool and a failing
// command against their provider doubles).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claude } from '../../src/agents/claude.js';
import { codex } from '../../src/agents/codex.js';
import { MAX_ENTRY_CHARS, transcriptOf } from '../../src/agents/transcript.js';

const fixture = (name: string) =>
  readFileSync(join(import.meta.dirname, '../fixtures/transcripts', `${name}.jsonl`), 'utf8');

describe('a run’s transcript', () => {
  it('shows what claude did: its command and output, its progress, a failed command, its answer', () => {
    expect(transcriptOf(claude, fixture('claude-tool'))).toEqual([
      {
        kind: 'tool_call',
        id: 'toolu_0',
        tool: 'Bash',
        input: '{"command":"ls && echo hello > hello.txt","description":"run it"}',
        cut: 0,
      },
      { kind: 'tool_result', id: 'toolu_0', output: 'README.md\nsrc', error: false, cut: 0 },
      { kind: 'progress', note: 'wrote hello.txt', percent: 50 },
      { kind: 'tool_result', id: 'toolu_1', output: '{"recorded":true}', error: false, cut: 0 },
      {
        kind: 'tool_call',
        id: 'toolu_2',
        tool: 'Bash',
        input: '{"command":"cat missing-file","description":"run it"}',
        cut: 0,
      },
      {
        kind: 'tool_result',
        id: 'toolu_2',
        output: 'Exit code 1\ncat: missing-file: No such file or directory',
        error: true,
        cut: 0,
      },
      { kind: 'text', text: 'Done: hello.txt is written.', cut: 0 },
    ]);
  });

  it('shows what codex did alike, with its own warning as an error', () => {
    expect(transcriptOf(codex, fixture('codex-tool'))).toEqual([
      {
        kind: 'error',
        text: expect.stringContaining('Model metadata for `gpt-double` not found'),
        cut: 0,
      },
      {
        kind: 'tool_call',
        id: 'item_1',
        tool: 'shell',
        input: "/bin/bash -lc 'ls && echo hello > hello.txt'",
        cut: 0,
      },
      { kind: 'tool_result', id: 'item_1', output: 'README.md\nsrc\n', error: false, cut: 0 },
      { kind: 'progress', note: 'wrote hello.txt', percent: 50 },
      { kind: 'tool_result', id: 'item_2', output: '{"recorded":true}', error: false, cut: 0 },
      {
        kind: 'tool_call',
        id: 'item_3',
        tool: 'shell',
        input: "/bin/bash -lc 'cat missing-file'",
        cut: 0,
      },
      {
        kind: 'tool_result',
        id: 'item_3',
        output: 'cat: missing-file: No such file or directory\n',
        error: true,
        cut: 0,
      },
      { kind: 'text', text: 'Done: hello.txt is written.', cut: 0 },
    ]);
  });

  it('shows a call of gatehouse’s tools that codex’s own approval setting refused as a failed result', () => {
    const entries = transcriptOf(codex, fixture('codex-mcp-refused'));
    expect(entries).toContainEqual(
      expect.objectContaining({
        kind: 'tool_call',
        tool: 'gatehouse.get_task',
        input: '{"id":"T-1"}',
      }),
    );
    expect(entries).toContainEqual(
      expect.objectContaining({
        kind: 'tool_result',
        error: true,
        output: expect.stringMatching(/approval/),
      }),
    );
  });

  it('cuts a long output, saying by how much, and shows a line that is not JSON as it is', () => {
    const long = 'x'.repeat(MAX_ENTRY_CHARS + 500);
    const lines = [
      'error: something on stderr',
      JSON.stringify({
        type: 'user',
        message: { content: [{ type: 'tool_result', tool_use_id: 't', content: long }] },
      }),
      '{"type":"assistant", not json',
      '',
    ].join('\n');
    expect(transcriptOf(claude, lines)).toEqual([
      { kind: 'log', text: 'error: something on stderr', cut: 0 },
      {
        kind: 'tool_result',
        id: 't',
        output: long.slice(0, MAX_ENTRY_CHARS),
        error: false,
        cut: 500,
      },
      { kind: 'log', text: '{"type":"assistant", not json', cut: 0 },
    ]);
  });

  it('shows a call whose input holds a partial message’s type, and says where gatehouse cut the output', () => {
    const sneaky = JSON.stringify({
      type: 'assistant',
      message: {
        content: [
          {
            type: 'tool_use',
            id: 't',
            name: 'Bash',
            input: { command: 'rm -rf x', x: { type: 'stream_event' } },
          },
        ],
      },
    });
    const lines = [
      '{"type":"stream_event","event":{"type":"content_block_delta"}}',
      sneaky,
      '{"type":"gatehouse_cut","bytes":123456}',
    ].join('\n');
    expect(transcriptOf(claude, lines)).toEqual([
      {
        kind: 'tool_call',
        id: 't',
        tool: 'Bash',
        input: '{"command":"rm -rf x","x":{"type":"stream_event"}}',
        cut: 0,
      },
      { kind: 'log', text: '[… 123456 bytes of output cut when the run ended]', cut: 0 },
    ]);
  });

  it('shows every line of a command’s run as it is', () => {
    expect(transcriptOf(null, '{"type":"assistant"}\nplain\n')).toEqual([
      { kind: 'log', text: '{"type":"assistant"}', cut: 0 },
      { kind: 'log', text: 'plain', cut: 0 },
    ]);
  });

  it('shows claude’s error result as an error', () => {
    const line = JSON.stringify({
      type: 'result',
      subtype: 'error_during_execution',
      is_error: true,
      errors: ['No conversation found with session ID: abc'],
    });
    expect(transcriptOf(claude, line)).toEqual([
      { kind: 'error', text: 'No conversation found with session ID: abc', cut: 0 },
    ]);
  });
});
