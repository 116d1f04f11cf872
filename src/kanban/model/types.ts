// The board's vocabulary: statuses, outcomes, and the shapes of tasks, runs and events.
import type { BlockKind, TaskApproval, TaskProgress, TaskQuestion } from './asks.js';
import type { TaskPr } from './pull-request.js';
import type { Budget } from './budget.js';
import type { AttemptGroup, JudgeResult } from './attempts.js';
import type { RunEvidence, WorkspaceRecord } from '../../workspaces/types.js';
import type { RunAgent } from '../../agents/types.js';

export const TASK_STATUSES = [
  'todo',
  'ready',
  'running',
  'review',
  'blocked',
  'done',
  'archived',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** A count of 0 for every status (what a count by status starts from). */
export function noTasks(): Record<TaskStatus, number> {
  return Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])) as Record<TaskStatus, number>;
}

export const RUN_OUTCOMES = [
  'completed',
  'blocked',
  'crashed',
  'protocol_violation',
  'rate_limited',
  'timed_out',
  'stale',
  'reclaimed',
  'archived',
  'spawn_failed',
  'interrupted',
  'lost',
  /** Ended past its task's budget (docs/budgets.md): not a failure; the task is blocked. */
  'budget_exceeded',
] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];

export const HOST_STATES = ['active', 'draining', 'dead'] as const;
export type HostState = (typeof HOST_STATES)[number];

/** A daemon sharing the board, with its lease (times are the database's clock). */
export interface Host {
  id: number;
  name: string;
  startedAt: number;
  renewedAt: number;
  leaseExpiresAt: number;
  state: HostState;
  running: number;
  capacity: number;
  profiles: string[];
  version: string;
}

export type Origin =
  | { kind: 'api' }
  | { kind: 'cli' }
  | { kind: 'platform'; platform: string; channel: string; user?: string }
  /** Made by an agent over MCP (docs/mcp.md): the run that made it. */
  | { kind: 'mcp'; runId: string }
  /** Made by a schedule's firing (docs/schedules.md); fireTime is ISO 8601. */
  | { kind: 'schedule'; name: string; fireTime: string };

export interface Task {
  id: string;
  title: string;
  body: string;
  assignee: string | null;
  status: TaskStatus;
  priority: number;
  parents: string[];
  createdAt: number;
  updatedAt: number;
  startedAt: number | null;
  completedAt: number | null;
  maxRuntimeSeconds: number | null;
  maxRetries: number | null;
  consecutiveFailures: number;
  lastFailureError: string | null;
  result: unknown;
  summary: string | null;
  currentRunId: string | null;
  blockReason: string | null;
  notBefore: number | null;
  origin: Origin;
  /** The repository it asked to work in (a name in workspaces.repos), or null: its profile's. */
  repo: string | null;
  /** What its next run is asked to do besides the task (a follow-up, docs/workers.md), or null. */
  instructions: string | null;
  /** The model its agent profile runs it with (docs/agents.md), or null: the profile's. */
  model: string | null;
  /** Its completed runs wait in review for a person (docs/workers.md); null: as its profile says. */
  review: boolean | null;
  /** Its workspace (docs/workspaces.md), or null: it runs in its profile's cwd. */
  workspace: WorkspaceRecord | null;
  /** Its pull request (docs/pull-requests.md), or null. */
  pr: TaskPr | null;
  /** Why it is blocked when a person must do one thing: answer its question (docs/mcp.md). */
  blockKind: BlockKind | null;
  /** The question its agent asked and nobody answered yet, or null. */
  question: TaskQuestion | null;
  /** The last progress its agent reported, or null. */
  progress: TaskProgress | null;
  /** Its first run waits for a person (approval "before_run"), or null: it does not. */
  approval: TaskApproval | null;
  /** Its own budget (docs/budgets.md), or null: its profile's, if any. */
  budget: Budget | null;
  /** The schedule firing that made it (docs/schedules.md), or null. */
  schedule: { name: string; fireTime: string } | null;
  /** The task it is an attempt of (docs/attempts.md), or null. */
  attemptOf: string | null;
  /** Its attempts, when it was given to several (docs/attempts.md), or null. */
  attempts: AttemptGroup | null;
  /** What the judge said of it, as an attempt, or null. */
  judge: JudgeResult | null;
  /** What it waits for in todo besides its parents: a person's approval, or its attempts. */
  awaiting: 'approval' | 'attempts' | null;
}

export interface Run {
  id: string;
  taskId: string;
  profile: string;
  /** The host that ran it (cluster.hostName); null for runs from before hosts were recorded. */
  host: string | null;
  pid: number | null;
  pgid: number | null;
  startTime: number | null;
  startedAt: number;
  endedAt: number | null;
  outcome: RunOutcome | null;
  exitCode: number | null;
  signal: string | null;
  error: string | null;
  summary: string | null;
  cpuPercentMax: number | null;
  rssBytesMax: number | null;
  logPath: string;
  /** What the run did to its task's worktree, or null. */
  workspace: RunEvidence | null;
  /** An agent run's session and usage (docs/agents.md), or null. */
  agent: RunAgent | null;
}

export interface Comment {
  id: number;
  taskId: string;
  author: string;
  text: string;
  at: number;
}

/** How a worker's process ended, as its wrapper recorded it (or its parent saw it). */
export interface ExitRecord {
  exitCode: number | null;
  signal: string | null;
  /** The wrapper started no worker: its host's lease had run out when it got to (`--until`). */
  notStarted?: true;
}

/** What a worker said about its work (API body or result.json). */
export type Verdict =
  | { status: 'done'; summary: string | null; result: unknown }
  | { status: 'blocked'; reason: string };

/** A worker's group leader as recorded at spawn (proc.json and the run row). */
export interface ProcRecord {
  pid: number;
  pgid: number;
  startTime: number;
  bootId: string;
}
