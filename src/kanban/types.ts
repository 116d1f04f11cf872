// The board's vocabulary: statuses, outcomes, and the shapes of tasks, runs and events.
export const TASK_STATUSES = ['todo', 'ready', 'running', 'blocked', 'done', 'archived'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

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
] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];

export type Origin =
  { kind: 'api' } | { kind: 'cli' } | { kind: 'platform'; platform: string; channel: string };

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
}

export interface Run {
  id: string;
  taskId: string;
  profile: string;
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
}

export interface BoardEvent {
  id: number;
  taskId: string | null;
  runId: string | null;
  kind: string;
  payload: Record<string, unknown>;
  at: number;
}

/** An event about to be written: the store assigns id and time. */
export type NewEvent = Omit<BoardEvent, 'id' | 'at'>;

export interface Comment {
  id: number;
  taskId: string;
  author: string;
  text: string;
  at: number;
}
