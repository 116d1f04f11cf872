// Claude Code (`claude -p`, stream-json): its command line, environment and output (docs/agents.md).
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

const GONE = /No conversation found/i;

function usageOf(result: Record<string, unknown>): AgentUsage {
  const u = obj(result.usage) ?? {};
  return {
    inputTokens: num(u.input_tokens),
    outputTokens: num(u.output_tokens),
    cachedTokens: num(u.cache_read_input_tokens),
    costUsd: num(result.total_cost_usd),
    numTurns: num(result.num_turns),
  };
}

function endingOf(
  result: Record<string, unknown>,
  limited: { resetAt: number | null } | null,
): AgentEnding {
  const text = str(result.result) ?? '';
  const errors = Array.isArray(result.errors)
    ? result.errors.filter((e) => typeof e === 'string')
    : [];
  const subtype = str(result.subtype);
  if (result.is_error !== true && subtype === 'success') {
    const denials = Array.isArray(result.permission_denials) ? result.permission_denials : [];
    if (denials.length > 0) {
      const names = [...new Set(denials.map((d) => str(obj(d)?.tool_name) ?? '?'))];
      return { kind: 'blocked', reason: `tools refused: ${names.join(', ')}` };
    }
    return { kind: 'completed', text };
  }
  if (subtype === 'error_max_turns') return { kind: 'blocked', reason: 'max turns reached' };
  if (subtype === 'error_max_budget_usd' || str(result.terminal_reason) === 'budget_exhausted')
    return { kind: 'budget_exceeded', message: errors.join('; ') || 'its --max-budget-usd' };
  const message = text || errors.join('; ') || `claude ended with ${subtype ?? 'an error'}`;
  if (errors.some((e) => GONE.test(e))) return { kind: 'session_gone', error: message };
  // A rejected rate_limit_event just before an error result: the limit is why it ended.
  if (limited) return { kind: 'rate_limited', message, resetAt: limited.resetAt };
  const status = num(result.api_error_status);
  if (status !== null || str(result.terminal_reason) === 'api_error')
    return apiErrorEnding(status, message, null);
  return { kind: 'crashed', error: message };
}

class ClaudeReader implements AgentReader {
  private sessionId: string | null = null;
  private usage: AgentUsage | null = null;
  private ending: AgentEnding | null = null;
  /** The last `rate_limit_event` said the limit was hit: with its reset (epoch ms), if given. */
  private limited: { resetAt: number | null } | null = null;
  /** Each answer's input and output tokens so far, by its message id. */
  private readonly answers = new Map<string, { input: number; output: number }>();
  /** The answer being streamed (--include-partial-messages): its message_delta has no id. */
  private streaming: string | null = null;

  line(v: Record<string, unknown>): void {
    const sid = str(v.session_id);
    if (sid && this.sessionId === null) this.sessionId = sid;
    if (v.type === 'stream_event') {
      const event = obj(v.event);
      if (event?.type === 'message_start') {
        this.streaming = str(obj(event.message)?.id);
        this.count(obj(event.message), obj(obj(event.message)?.usage));
      }
      // Its output tokens so far (cumulative), known only here until the result.
      if (event?.type === 'message_delta' && this.streaming)
        this.count({ id: this.streaming }, obj(event.usage));
    }
    if (v.type === 'rate_limit_event') {
      const info = obj(v.rate_limit_info) ?? v;
      const resets = num(info.resetsAt);
      // A later event that says `allowed` ends what an earlier `rejected` one said.
      this.limited =
        str(info.status) === 'rejected'
          ? { resetAt: resets === null ? null : resets * 1000 }
          : null;
      return;
    }
    if (v.type !== 'result') return;
    this.usage = usageOf(v);
    this.ending = endingOf(v, this.limited);
    // A session the CLI reported but never had (a failed resume) is not the run's.
    if (this.ending.kind === 'session_gone') this.sessionId = null;
  }

  reading(): AgentReading {
    return { sessionId: this.sessionId, usage: this.usage ?? this.answered(), ending: this.ending };
  }

  /** Before its result (a live run, or one ended before it printed one): its answers' tokens. */
  private answered(): AgentUsage | null {
    if (this.answers.size === 0) return null;
    let inputTokens = 0;
    let outputTokens = 0;
    for (const a of this.answers.values()) {
      inputTokens += a.input;
      outputTokens += a.output;
    }
    return { inputTokens, outputTokens, cachedTokens: null, costUsd: null, numTurns: null };
  }

  private count(message: Record<string, unknown> | null, usage: Record<string, unknown> | null) {
    const id = str(message?.id);
    if (!id || !usage) return;
    const known = this.answers.get(id) ?? { input: 0, output: 0 };
    this.answers.set(id, {
      input: Math.max(known.input, num(usage.input_tokens) ?? 0),
      output: Math.max(known.output, num(usage.output_tokens) ?? 0),
    });
  }
}

/** An assistant's or a user's message's blocks: text, tool calls, tool results. */
function blocksOf(v: Record<string, unknown>): Record<string, unknown>[] {
  const content = obj(v.message)?.content;
  return Array.isArray(content) ? content.map(obj).filter((b) => b !== null) : [];
}

/** What one line shows in the transcript (docs/mcp.md). */
function transcript(v: Record<string, unknown>): TranscriptEntry[] {
  if (v.type === 'assistant')
    return blocksOf(v).flatMap((b) => {
      if (b.type === 'text' && str(b.text)) return [textEntry('text', str(b.text)!)];
      if (b.type !== 'tool_use') return [];
      const name = str(b.name) ?? '?';
      // An MCP tool is mcp__<server>__<tool>.
      const mcp = /^mcp__(.+?)__(.+)$/.exec(name);
      return [toolCall(str(b.id), mcp?.[1] ?? null, mcp?.[2] ?? name, b.input)];
    });
  if (v.type === 'user')
    return blocksOf(v)
      .filter((b) => b.type === 'tool_result')
      .map((b) => toolResult(str(b.tool_use_id), contentText(b.content), b.is_error === true));
  if (v.type === 'result' && (v.is_error === true || str(v.subtype) !== 'success')) {
    const e = endingOf(v, null);
    const said =
      e.kind === 'blocked'
        ? e.reason
        : e.kind === 'rate_limited' || e.kind === 'budget_exceeded'
          ? e.message
          : e.kind === 'completed'
            ? e.text
            : e.error;
    return [textEntry('error', said)];
  }
  return [];
}

export const claude: AgentKind = {
  name: 'claude',
  args(agent: AgentConfig, plan) {
    return [
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      // A long reply being written is output, not silence (idleTimeoutSeconds).
      '--include-partial-messages',
      ...(plan.model ? ['--model', plan.model] : []),
      ...(agent.maxTurns !== null ? ['--max-turns', String(agent.maxTurns)] : []),
      // What is left of its task's dollar budget: it stops itself there (docs/budgets.md).
      ...(plan.maxBudgetUsd != null
        ? ['--max-budget-usd', (Math.ceil(plan.maxBudgetUsd * 1e4) / 1e4).toFixed(4)]
        : []),
      ...(plan.resume ? ['--resume', plan.resume] : []),
      // gatehouse's tools (docs/mcp.md), and no MCP server of the user's own configuration.
      ...(plan.mcp
        ? [
            '--mcp-config',
            plan.mcp.configFile,
            '--strict-mcp-config',
            '--allowedTools',
            'mcp__gatehouse',
          ]
        : []),
      ...agent.args,
    ];
  },
  mcpFile(mcp) {
    return {
      mcpServers: {
        gatehouse: {
          type: 'http',
          url: mcp.url,
          // Read from its environment when it starts: the file holds no secret.
          headers: { Authorization: `Bearer \${${mcp.tokenEnv}}` },
          // Offered at once, not behind its tool search.
          alwaysLoad: true,
        },
      },
    };
  },
  env(agent) {
    return {
      // Its default back-off holds a slot for minutes on a 429; a limited run gives it back.
      CLAUDE_CODE_MAX_RETRIES: '2',
      // A request with no answer is given up as a silent agent would be.
      API_TIMEOUT_MS: String(Math.min(agent.idleTimeoutSeconds, 600) * 1000),
      DISABLE_AUTOUPDATER: '1',
    };
  },
  needles: [
    '"type":"result"',
    '"type":"rate_limit_event"',
    '"subtype":"init"',
    // Each answer's usage as it streams (its budget, docs/budgets.md).
    '"type":"message_start"',
    '"type":"message_delta"',
  ],
  reader: () => new ClaudeReader(),
  endingFromLog(logTail) {
    const line = logTail.split('\n').find((l) => GONE.test(l));
    return line ? { kind: 'session_gone', error: line.trim() } : null;
  },
  transcript,
  // A reply as it is written: the whole message follows as an `assistant` line.
  transcriptSkips: ['{"type":"stream_event"'],
};
