// The agents room's vocabulary (docs/agents.md): what a kind of coding-agent CLI must provide (its
// command line, its environment, a reader of what it prints) and what a run's output says.
import type { AgentConfig } from '../config/schema.js';

/** Tokens and cost of one run; null where the kind does not print the figure. */
export interface AgentUsage {
  inputTokens: number | null;
  outputTokens: number | null;
  cachedTokens: number | null;
  costUsd: number | null;
  numTurns: number | null;
}

/** How the agent's turn ended, as it printed it. */
export type AgentEnding =
  | { kind: 'completed'; text: string }
  | { kind: 'blocked'; reason: string }
  /** `resetAt` (epoch ms) when the agent said when the limit ends. */
  | { kind: 'rate_limited'; message: string; resetAt: number | null }
  | { kind: 'crashed'; error: string }
  /** The session a resumed run asked for is not there. */
  | { kind: 'session_gone'; error: string }
  /** It stopped at the dollar ceiling it was started with (claude's --max-budget-usd). */
  | { kind: 'budget_exceeded'; message: string };

/** What a run's output has said so far. */
export interface AgentReading {
  sessionId: string | null;
  usage: AgentUsage | null;
  /** null: no final event yet (or ever). */
  ending: AgentEnding | null;
  /** Its calls of gatehouse's MCP tools that the agent's own approval rules cancelled. */
  cancelledCalls?: { tool: string; message: string }[];
}

/** Reads one run's output a line at a time, in order. */
export interface AgentReader {
  /** One JSON line the agent printed, parsed. */
  line(value: Record<string, unknown>): void;
  reading(): AgentReading;
}

/** What a run of an agent needs to be started. */
export interface AgentRunPlan {
  model: string | null;
  /** The session to resume, or null: a fresh one. */
  resume: string | null;
  /** Dollars left of its task's budget (docs/budgets.md): a kind that can stops itself there. */
  maxBudgetUsd?: number | null;
  /** The profile's own environment (the provider's key among it). */
  profileEnv: Record<string, string>;
  /**
   * gatehouse's sandbox contains the run (docs/sandbox.md): a kind's own tool sandbox, which
   * cannot nest in it (no capability, no user namespace to make), is turned off.
   */
  sandboxed: boolean;
  /** gatehouse's MCP endpoint for this run (docs/mcp.md), or null: its profile has none. */
  mcp: AgentMcp | null;
}

/** How a run reaches gatehouse's MCP tools: the endpoint, and where its token is. */
export interface AgentMcp {
  url: string;
  /** The environment variable holding the run's token (never written to a file). */
  tokenEnv: string;
  /** The run folder's mcp.json, for a kind that reads its servers from a file. */
  configFile: string;
}

/** One thing a run's agent said or did, as its transcript shows it (docs/mcp.md). */
export type TranscriptEntry =
  | { kind: 'text'; text: string; cut: number }
  | { kind: 'tool_call'; id: string | null; tool: string; input: string; cut: number }
  | { kind: 'tool_result'; id: string | null; output: string; error: boolean; cut: number }
  /** Its agent asked a person, over gatehouse's ask_human. */
  | { kind: 'question'; text: string; options: string[] | null }
  /** Its agent reported progress, over gatehouse's report_progress. */
  | { kind: 'progress'; note: string; percent: number | null }
  | { kind: 'error'; text: string; cut: number }
  /** A line that is not its agent's JSON, or any line of a command's run. */
  | { kind: 'log'; text: string; cut: number };

/** One kind of coding-agent CLI: a file of its own in this room. */
export interface AgentKind {
  readonly name: AgentConfig['kind'];
  /** The arguments after its program; the prompt goes on stdin. */
  args(agent: AgentConfig, plan: AgentRunPlan): string[];
  /** The run folder's mcp.json for a kind that reads its MCP servers from a file, else null. */
  mcpFile(mcp: AgentMcp): unknown;
  /** Environment the kind needs by default; the profile's own env overrides it. */
  env(agent: AgentConfig): Record<string, string>;
  /**
   * What a line that matters holds, byte for byte (`"type":"result"`): any other line (partial
   * messages, tool output) is passed over unparsed. Inside a JSON string a quote is escaped, so
   * such a needle is only ever found in the line's own structure.
   */
  readonly needles: readonly string[];
  reader(): AgentReader;
  /** With no final event on stdout: what its own error stream (in the run's log) says, or null. */
  endingFromLog(logTail: string): AgentEnding | null;
  /** What one JSON line it printed shows in its run's transcript (often nothing). */
  transcript(value: Record<string, unknown>): TranscriptEntry[];
  /** Lines that begin with any of these are never shown, and not parsed for the transcript. */
  readonly transcriptSkips: readonly string[];
}

/** What an agent run recorded (runs[].agent): its session and usage. */
export interface RunAgent {
  kind: string;
  model: string | null;
  sessionId: string | null;
  /** The session it was asked to resume, or null: a fresh one. */
  resumed: string | null;
  /** It asked to resume a session the agent no longer had. */
  resumeFailed: boolean;
  usage: AgentUsage | null;
}
