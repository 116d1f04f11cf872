// OpenAI's Codex CLI (`codex exec --json`): its command line, environment and output (docs/agents.md).
import type { AgentConfig } from '../config/schema.js';
import { apiErrorEnding, num, obj, str } from './api-errors.js';
import { contentText, textEntry, toolCall, toolResult } from './transcript.js';
import type {
  AgentEnding,
  AgentKind,
  AgentReader,
  AgentReading,
  AgentUsage,
  TranscriptEntry,
} from './types.js';

const GONE = /no rollout found/i;
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
/** Names of the profile's variables its tools are not shown (the provider's key among them). */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL/i;

/**
 * When a usage limit ends, from codex's message: "try again at 8:15 PM" (the host's local time,
 * the next such minute) or "try again in 3 minutes"; null when it says neither.
 */
export function resetFromMessage(message: string, now = new Date()): number | null {
  const within = /try again in (\d+(?:\.\d+)?)\s*(second|minute|hour|day)s?/i.exec(message);
  if (within) {
    const unit = { second: 1, minute: 60, hour: 3600, day: 86_400 }[
      within[2]!.toLowerCase() as 'second'
    ];
    return now.getTime() + Number(within[1]) * unit * 1000;
  }
  // "try again at 8:15 PM", or on another day "try again at Dec 29th, 2025 10:15 PM".
  const at =
    /try again at (?:([A-Z][a-z]{2})[a-z]* (\d{1,2})(?:st|nd|rd|th)?,? (\d{4}),? )?(\d{1,2}):(\d{2})\s*([AP]\.?M\.?)?/i.exec(
      message,
    );
  if (!at) return null;
  let hour = Number(at[4]);
  const minute = Number(at[5]);
  const half = at[6]?.[0]?.toUpperCase();
  if (hour > 23 || minute > 59 || (half && (hour < 1 || hour > 12))) return null;
  if (half === 'P' && hour < 12) hour += 12;
  if (half === 'A' && hour === 12) hour = 0;
  const reset = new Date(now);
  if (at[1]) {
    const month = MONTHS.indexOf(at[1].toLowerCase());
    if (month === -1) return null;
    reset.setFullYear(Number(at[3]), month, Number(at[2]));
    reset.setHours(hour, minute, 0, 0);
    return reset.getTime();
  }
  reset.setHours(hour, minute, 0, 0);
  if (reset.getTime() <= now.getTime()) reset.setDate(reset.getDate() + 1);
  return reset.getTime();
}

class CodexReader implements AgentReader {
  private sessionId: string | null = null;
  private usage: AgentUsage | null = null;
  private ending: AgentEnding | null = null;
  private lastText = '';
  private readonly cancelled: { tool: string; message: string }[] = [];

  line(v: Record<string, unknown>): void {
    switch (v.type) {
      case 'thread.started':
        this.sessionId = str(v.thread_id) ?? this.sessionId;
        return;
      case 'item.completed': {
        const item = obj(v.item);
        if (item?.type === 'agent_message') this.lastText = str(item.text) ?? this.lastText;
        // A call of gatehouse's tools its approval rules refused ("requires approval, but
        // approval policy is never", "user cancelled MCP tool call"): the setting, not gatehouse.
        const message = str(obj(item?.error)?.message);
        if (
          item?.type === 'mcp_tool_call' &&
          item.server === 'gatehouse' &&
          message &&
          /requires approval|cancel/i.test(message)
        )
          this.cancelled.push({ tool: str(item.tool) ?? '?', message });
        return;
      }
      case 'turn.completed': {
        const u = obj(v.usage) ?? {};
        this.usage = {
          inputTokens: (this.usage?.inputTokens ?? 0) + (num(u.input_tokens) ?? 0),
          outputTokens: (this.usage?.outputTokens ?? 0) + (num(u.output_tokens) ?? 0),
          cachedTokens: (this.usage?.cachedTokens ?? 0) + (num(u.cached_input_tokens) ?? 0),
          costUsd: null,
          numTurns: null,
        };
        this.ending = { kind: 'completed', text: this.lastText };
        return;
      }
      case 'turn.failed': {
        const message = str(obj(v.error)?.message) ?? 'the turn failed';
        this.ending = apiErrorEnding(null, message, resetFromMessage(message));
        return;
      }
    }
  }

  reading(): AgentReading {
    return {
      sessionId: this.sessionId,
      usage: this.usage,
      ending: this.ending,
      ...(this.cancelled.length > 0 ? { cancelledCalls: [...this.cancelled] } : {}),
    };
  }
}

/** An item as it starts: a command, a tool call or a search. */
function started(item: Record<string, unknown>): TranscriptEntry[] {
  const id = str(item.id);
  if (item.type === 'command_execution') return [toolCall(id, null, 'shell', str(item.command))];
  if (item.type === 'mcp_tool_call')
    return [toolCall(id, str(item.server), str(item.tool) ?? '?', item.arguments)];
  if (item.type === 'web_search') return [toolCall(id, null, 'web_search', str(item.query))];
  return [];
}

/** An item as it ends: what a command or a tool answered, a message, an edit, an error. */
function completed(item: Record<string, unknown>): TranscriptEntry[] {
  const id = str(item.id);
  switch (item.type) {
    case 'agent_message':
      return [textEntry('text', str(item.text) ?? '')];
    case 'command_execution':
      return [
        toolResult(
          id,
          str(item.aggregated_output) ?? '',
          item.status === 'failed' || (num(item.exit_code) ?? 0) !== 0,
        ),
      ];
    case 'mcp_tool_call': {
      const error = str(obj(item.error)?.message);
      return [toolResult(id, error ?? contentText(obj(item.result)?.content), error !== null)];
    }
    case 'file_change': {
      const changes = Array.isArray(item.changes) ? item.changes.map(obj) : [];
      const files = changes.map((c) => `${str(c?.kind) ?? 'change'} ${str(c?.path) ?? '?'}`);
      return [toolCall(id, null, 'edit', files.join('\n'))];
    }
    case 'error':
      return [textEntry('error', str(item.message) ?? 'error')];
  }
  return [];
}

/** What one line shows in the transcript (docs/mcp.md). */
function transcript(v: Record<string, unknown>): TranscriptEntry[] {
  const item = obj(v.item);
  if (v.type === 'item.started' && item) return started(item);
  if (v.type === 'item.completed' && item) return completed(item);
  if (v.type === 'turn.failed')
    return [textEntry('error', str(obj(v.error)?.message) ?? 'the turn failed')];
  if (v.type === 'error') return [textEntry('error', str(v.message) ?? 'error')];
  return [];
}

export const codex: AgentKind = {
  name: 'codex',
  args(agent: AgentConfig, plan) {
    const hidden = [
      ...Object.keys(plan.profileEnv).filter((name) => SECRET_NAME.test(name)),
      ...(plan.mcp ? [plan.mcp.tokenEnv] : []),
    ];
    return [
      'exec',
      '--json',
      // gatehouse chose its folder (a worktree, or a scratch folder that is no repository).
      '--skip-git-repo-check',
      ...(plan.model ? ['--model', plan.model] : []),
      // Inside gatehouse's sandbox its own would use the host's bwrap, which cannot nest there
      // (and Debian 12's 0.8 breaks its writes): gatehouse's is the boundary (docs/sandbox.md).
      ...(plan.sandboxed ? ['--dangerously-bypass-approvals-and-sandbox'] : []),
      ...(hidden.length > 0
        ? ['-c', `shell_environment_policy.exclude=${JSON.stringify(hidden)}`]
        : []),
      // gatehouse's tools (docs/mcp.md): its calls let through (exec never asks anyone), and a
      // server it cannot reach is an error, not a run without them.
      ...(plan.mcp
        ? [
            '-c',
            `mcp_servers.gatehouse.url=${JSON.stringify(plan.mcp.url)}`,
            '-c',
            `mcp_servers.gatehouse.bearer_token_env_var=${JSON.stringify(plan.mcp.tokenEnv)}`,
            '-c',
            'mcp_servers.gatehouse.default_tools_approval_mode="approve"',
            '-c',
            'mcp_servers.gatehouse.required=true',
          ]
        : []),
      ...agent.args,
      ...(plan.resume ? ['resume', plan.resume] : []),
      // The prompt from stdin.
      '-',
    ];
  },
  env: () => ({}),
  mcpFile: () => null,
  needles: [
    '"type":"thread.started"',
    '"type":"agent_message"',
    '"type":"mcp_tool_call"',
    '"type":"turn.completed"',
    '"type":"turn.failed"',
  ],
  reader: () => new CodexReader(),
  endingFromLog(logTail) {
    const line = logTail.split('\n').find((l) => GONE.test(l));
    return line ? { kind: 'session_gone', error: line.trim() } : null;
  },
  transcript,
  transcriptSkips: [],
};
