// An agent profile's run (docs/agents.md): before it starts, its prompt and whether it resumes the
// task's session; when it ends, its verdict from what the agent printed (agent.jsonl), so a run
// adopted after a restart is judged exactly as one this daemon watched.
import { readFileSync } from 'node:fs';
import type { AgentConfig } from '../../config/schema.js';
import { allowedModels } from '../../config/agents.js';
import { agentKind } from '../../agents/kinds.js';
import { readAgentOutput } from '../../agents/output.js';
import { resumePrompt, taskPrompt, type PromptInput } from '../../agents/prompt.js';
import type { AgentEnding, AgentReading, AgentRunPlan, RunAgent } from '../../agents/types.js';
import { spentByRuns, usdLeft, type Budget } from '../model/budget.js';
import type { Classification } from '../model/exit-classifier.js';
import { classifyExit } from '../model/exit-classifier.js';
import type { ExitRecord } from '../model/types.js';
import type { Claim } from '../moves/claim.js';
import type { Tables } from '../store/contract.js';
import type { WorkspaceRecord } from '../../workspaces/types.js';
import { runFile } from './run-files.js';

/** The comments an agent is shown at most (the newest). */
const MAX_COMMENTS = 50;
/** The part of the final text kept as the run's summary. */
const SUMMARY_CHARS = 2000;
/**
 * The longest a rate limit holds a profile (a weekly limit, and a day): what an agent printed
 * (or a tool forged in its output) never holds it longer.
 */
export const MAX_HOLD_MS = 8 * 86_400_000;

/** What the run folder's agent.json keeps of how the run was started. */
export interface AgentStartRecord {
  kind: AgentConfig['kind'];
  model: string | null;
  resume: string | null;
}

export interface AgentStart {
  prompt: string;
  plan: AgentRunPlan;
  record: AgentStartRecord;
}

function promptWorkspace(workspace: WorkspaceRecord | null, cwd: string): PromptInput['workspace'] {
  if (workspace?.kind === 'worktree')
    return {
      kind: 'worktree',
      path: workspace.path,
      branch: workspace.branch ?? '',
      base: workspace.base ?? '',
    };
  if (workspace?.kind === 'scratch') return { kind: 'scratch', path: workspace.path };
  return { kind: 'none', path: cwd };
}

/** The run's prompt and plan: a follow-up or change request resumes the last session. */
export async function planAgentRun(
  tables: Pick<Tables, 'runs' | 'tasks'>,
  claim: Claim,
  agent: AgentConfig,
  profileEnv: Record<string, string>,
  workspace: WorkspaceRecord | null,
  cwd: string,
  sandboxed = false,
  /** The task's budget (its own, else its profile's): a claude run stops at what is left. */
  budget: Budget | null = null,
): Promise<AgentStart> {
  const { task } = claim;
  // Asked for with another assignee (then moved here), or allowed on another host only.
  if (task.model !== null && !allowedModels(agent).includes(task.model))
    throw new Error(
      `the task's model "${task.model}" is not one this profile allows (agent.model, agent.models)`,
    );
  const earlier = (await tables.runs.forTask(task.id)).filter((r) => r.id !== claim.run.id);
  const last = earlier.at(-1);
  const lastAgent = earlier.findLast((r) => r.agent !== null)?.agent ?? null;
  const resume =
    task.instructions !== null &&
    lastAgent !== null &&
    lastAgent.kind === agent.kind &&
    lastAgent.sessionId !== null &&
    !lastAgent.resumeFailed
      ? lastAgent.sessionId
      : null;
  const input: PromptInput = {
    taskId: task.id,
    title: task.title,
    body: task.body,
    // A change request is a comment too: said once, as the instructions.
    comments: (
      await tables.tasks.commentsSince(task.id, last?.startedAt ?? 0, MAX_COMMENTS)
    ).filter((c) => c.text !== task.instructions),
    instructions: task.instructions,
    workspace: promptWorkspace(workspace, cwd),
  };
  return {
    prompt: resume ? resumePrompt(input) : taskPrompt(input),
    // The MCP endpoint is the launch's to give (it knows the daemon's URL and the run's token).
    plan: {
      model: task.model ?? agent.model,
      resume,
      profileEnv,
      sandboxed,
      mcp: null,
      maxBudgetUsd: usdLeft(budget, spentByRuns(earlier)),
    },
    record: { kind: agent.kind, model: task.model ?? agent.model, resume },
  };
}

/**
 * How an agent profile's run was started: its kind from the profile (never from a file the
 * agent's tools can write), the model and resumed session from agent.json where it is whole.
 */
export function readAgentStart(dir: string, agent: AgentConfig): AgentStartRecord {
  const start: AgentStartRecord = { kind: agent.kind, model: agent.model, resume: null };
  try {
    const v = JSON.parse(
      readFileSync(runFile(dir, 'agent.json'), 'utf8'),
    ) as Partial<AgentStartRecord>;
    return {
      ...start,
      model: typeof v.model === 'string' ? v.model : start.model,
      resume: typeof v.resume === 'string' ? v.resume : null,
    };
  } catch {
    return start;
  }
}

/** What an agent run printed of its session and usage, read whole now (an ended run). */
export function printedAgent(dir: string, agent: AgentConfig): RunAgent {
  const start = readAgentStart(dir, agent);
  const reading = readAgentOutput(runFile(dir, 'agent.jsonl'), agentKind(start.kind));
  return {
    kind: start.kind,
    model: start.model,
    sessionId: reading.sessionId ?? start.resume,
    resumed: start.resume,
    resumeFailed: false,
    usage: reading.usage,
  };
}

/** An agent run's verdict, with what settling it records besides. */
export interface AgentJudgement extends Classification {
  agent: RunAgent;
  /** Its calls of gatehouse's tools that the agent's own rules cancelled (docs/mcp.md). */
  mcpCancelled: { tool: string; message: string }[];
  hold: { until: number; reason: string } | null;
  resumeFailed: string | null;
}

function fromEnding(
  ending: AgentEnding,
  exit: ExitRecord | null,
  now: number,
  cooldownMs: number,
): Omit<AgentJudgement, 'agent' | 'mcpCancelled'> {
  const base = { exitCode: exit?.exitCode ?? null, signal: exit?.signal ?? null };
  switch (ending.kind) {
    case 'completed':
      return {
        ...base,
        outcome: 'completed',
        error: null,
        summary: ending.text.slice(0, SUMMARY_CHARS) || null,
        hold: null,
        resumeFailed: null,
      };
    case 'blocked':
      return {
        ...base,
        outcome: 'blocked',
        error: null,
        blockReason: ending.reason,
        hold: null,
        resumeFailed: null,
      };
    case 'rate_limited': {
      const reset = ending.resetAt !== null && ending.resetAt > now ? ending.resetAt : null;
      return {
        ...base,
        outcome: 'rate_limited',
        error: ending.message,
        hold: {
          until: Math.min(reset ?? now + cooldownMs, now + MAX_HOLD_MS),
          reason: ending.message,
        },
        resumeFailed: null,
      };
    }
    case 'crashed':
      return { ...base, outcome: 'crashed', error: ending.error, hold: null, resumeFailed: null };
    case 'budget_exceeded':
      // Stopped by its own dollar ceiling (docs/budgets.md): not a failure, the task blocked.
      return {
        ...base,
        outcome: 'budget_exceeded',
        error: null,
        blockReason: `budget reached: ${ending.message}`,
        hold: null,
        resumeFailed: null,
      };
    case 'session_gone':
      // Not the run's failure: the next run starts a fresh session with the whole task.
      return {
        ...base,
        outcome: 'interrupted',
        error: `the session to resume is gone (${ending.error}); the next run starts a fresh one`,
        hold: null,
        resumeFailed: ending.error,
      };
  }
}

/**
 * Judges an ended agent run from its output; with no final event in it, from its log (a lost
 * session on codex's error stream), then as any worker (exit status, signal).
 */
export function judgeAgentRun(
  dir: string,
  start: AgentStartRecord,
  exit: ExitRecord | null,
  logTail: string,
  pid: number | null,
  now: number,
  cooldownMs: number,
  /** What was read of its output already (a live run's), else it is read whole now. */
  read?: AgentReading,
): AgentJudgement {
  const kind = agentKind(start.kind);
  const reading = read ?? readAgentOutput(runFile(dir, 'agent.jsonl'), kind);
  const ending = reading.ending ?? (start.resume ? kind.endingFromLog(logTail) : null);
  const judged = ending
    ? fromEnding(ending, exit, now, cooldownMs)
    : {
        ...classifyExit(
          exit,
          exit?.exitCode === 0 ? 'the agent exited 0 without printing its final result' : null,
          logTail,
          pid,
        ),
        hold: null,
        resumeFailed: null,
      };
  const resumeFailed = judged.resumeFailed;
  const agent: RunAgent = {
    kind: start.kind,
    model: start.model,
    sessionId: resumeFailed ? null : (reading.sessionId ?? start.resume),
    resumed: start.resume,
    resumeFailed: resumeFailed !== null,
    usage: reading.usage,
  };
  const result =
    judged.outcome === 'completed'
      ? {
          result: {
            text: reading.ending?.kind === 'completed' ? reading.ending.text : '',
            sessionId: agent.sessionId,
            usage: reading.usage,
            costUsd: reading.usage?.costUsd ?? null,
          },
        }
      : {};
  return {
    ...judged,
    ...result,
    agent,
    resumeFailed,
    mcpCancelled: reading.cancelledCalls ?? [],
  };
}
