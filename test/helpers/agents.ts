// Agent profiles for the real CLIs the suite installed (test/agents-setup.ts), each talking to a
// local double of its provider (model-doubles.ts), with a HOME (and CODEX_HOME) of its own.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import type { ModelDouble } from './model-doubles.js';

export type Kind = 'claude' | 'codex';

/**
 * A test's gateway ends its agents when it closes: a test is over once its task is settled, and
 * an agent settled at its final line may still be in its grace (a daemon leaves its workers).
 */
export const ENDS_AGENTS = { shutdown: { workers: 'terminate' } } as const;

const homes: string[] = [];
const home = (kind: string) => {
  const dir = mkdtempSync(join(tmpdir(), `gh-${kind}-home-`));
  homes.push(dir);
  return dir;
};
// Once the file's tests (and the agents their gateways ended) are over: an agent keeps writing
// its HOME while it runs.
afterAll(() => {
  for (const dir of homes.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The suite's mark (test/global-setup.ts), so a process an agent leaves is found. */
const mark = () => ({ GH_TEST_SUITE: process.env.GH_TEST_SUITE ?? '' });

export const claudeBin = () => process.env.GH_CLAUDE_BIN!;
export const codexBin = () => process.env.GH_CODEX_BIN!;

/** A claude profile against `double`; `args` are the operator's flags (`--allowedTools`). */
export function claudeProfile(
  double: ModelDouble,
  agent: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) {
  return {
    agent: { kind: 'claude', bin: claudeBin(), args: ['--allowedTools', 'Write,Bash'], ...agent },
    env: {
      HOME: home('claude'),
      ANTHROPIC_BASE_URL: double.url,
      ANTHROPIC_API_KEY: 'sk-ant-test-key',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      ...mark(),
    },
    ...extra,
  };
}

/** A codex profile against `double`: a CODEX_HOME whose config names it as the provider. */
export function codexProfile(
  double: ModelDouble,
  agent: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) {
  const codexHome = home('codex');
  writeFileSync(
    join(codexHome, 'config.toml'),
    [
      'model_provider = "double"',
      'model = "gpt-double"',
      'approval_policy = "never"',
      'sandbox_mode = "workspace-write"',
      '[model_providers.double]',
      'name = "double"',
      `base_url = "${double.url}"`,
      'wire_api = "responses"',
      'env_key = "DOUBLE_API_KEY"',
      'request_max_retries = 1',
      'stream_max_retries = 1',
      '',
    ].join('\n'),
  );
  return {
    agent: { kind: 'codex', bin: codexBin(), ...agent },
    env: { HOME: codexHome, CODEX_HOME: codexHome, DOUBLE_API_KEY: 'sk-double-key', ...mark() },
    ...extra,
  };
}

/** The tool call that runs a shell command, in the kind's own words. */
export function shellCall(kind: Kind, command: string) {
  return kind === 'claude'
    ? { tool: 'Bash', input: { command, description: 'run it' } }
    : { tool: 'exec_command', input: { cmd: command } };
}

/** The call of one of gatehouse's MCP tools (docs/mcp.md), as each kind's model makes it. */
export function gatehouseCall(kind: Kind, tool: string, input: Record<string, unknown>) {
  return kind === 'claude'
    ? { tool: `mcp__gatehouse__${tool}`, input }
    : { tool, input, namespace: 'mcp__gatehouse' };
}
