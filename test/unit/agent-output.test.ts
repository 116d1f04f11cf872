// Reading an agent's output file (src/agents/output.ts): a last line without its newline, JSON
// with spaces after its colons and a verdict of megabytes are all judged; a finished run's file
// is bounded with its verdict kept.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { boundOutput, readAgentOutput } from '../../src/agents/output.js';
import { agentKind } from '../../src/agents/kinds.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function file(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'gh-output-'));
  dirs.push(dir);
  const path = join(dir, 'agent.jsonl');
  writeFileSync(path, text);
  return path;
}

const init = JSON.stringify({ type: 'system', subtype: 'init', session_id: 's-1', model: 'm' });
const result = (text: string) =>
  JSON.stringify({
    type: 'result',
    subtype: 'success',
    is_error: false,
    result: text,
    session_id: 's-1',
    num_turns: 2,
    total_cost_usd: 0.5,
    usage: { input_tokens: 10, output_tokens: 20 },
    permission_denials: [],
  });
const claude = agentKind('claude');

describe("an agent's output", () => {
  it('judges a final result printed without its newline', () => {
    const reading = readAgentOutput(file(`${init}\n${result('done')}`), claude);
    expect(reading.ending).toMatchObject({ kind: 'completed', text: 'done' });
  });

  it('judges JSON written with a space after every colon', () => {
    const spaced = (s: string) => s.replaceAll('":', '": ');
    const reading = readAgentOutput(file(`${spaced(init)}\n${spaced(result('roomy'))}\n`), claude);
    expect(reading.ending).toMatchObject({ kind: 'completed', text: 'roomy' });
    expect(reading.sessionId).toBe('s-1');
  });

  it('judges a verdict over 4 MiB from its head and tail, its summary the start of its text', () => {
    const huge = `BEGIN ${'é"\\\n'.repeat(2_000_000)} END`;
    const reading = readAgentOutput(file(`${init}\n${result(huge)}\n`), claude);
    expect(reading.ending).toMatchObject({ kind: 'completed' });
    expect((reading.ending as { text: string }).text.startsWith('BEGIN é"\\')).toBe(true);
    expect(reading.sessionId).toBe('s-1');
    expect(reading.usage).toMatchObject({ outputTokens: 20, costUsd: 0.5 });
  });

  it("bounds a finished run's file, keeping its start and its verdict", () => {
    const noise = JSON.stringify({ type: 'assistant', message: { content: 'x'.repeat(1000) } });
    const path = file(`${init}\n${`${noise}\n`.repeat(20_000)}${result('kept')}\n`);
    expect(boundOutput(path)).toBe(true);
    expect(statSync(path).size).toBeLessThan(6 * 1024 * 1024);
    const text = readFileSync(path, 'utf8');
    expect(text.startsWith(init)).toBe(true);
    expect(text).toMatch(/{"type":"gatehouse_cut","bytes":\d+}/);
    expect(readAgentOutput(path, claude).ending).toMatchObject({ text: 'kept' });
    expect(boundOutput(path)).toBe(false);
  });
});
