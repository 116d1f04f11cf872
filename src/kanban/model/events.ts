// Every event kind, its payload, and what it means to each consumer: one table, so a new kind
// is a compile error until someone decides whether it wakes dispatch, is terminal, is notified.
import type { AgentUsage } from '../../agents/types.js';
import type { Origin, TaskStatus } from './types.js';
import type { Budget, Spent } from './budget.js';

/** What a termination did to a worker's process group (archive, reclaim, timeout, stale). */
export interface TerminationReport {
  prevPid: number | null;
  terminated: boolean;
  sigkill: boolean;
  survived: boolean;
}

/** How a run ended, carried by the run's outcome event. */
export interface RunEndPayload {
  exitCode: number | null;
  signal: string | null;
  error?: string;
  summary?: string;
  reason?: string;
  prevPid: number | null;
  failures: number;
  /** From the run's start to its end, or null when the run is not known. */
  durationMs?: number | null;
  /** Present when the run was ended by a termination. */
  terminated?: boolean;
  sigkill?: boolean;
  survived?: boolean;
  ended?: number[];
  forced?: boolean;
  /** Completed, its task waits in review for a person (docs/workers.md). */
  review?: boolean;
  /** An agent run's usage as it printed it (docs/agents.md), with its profile. */
  agent?: { profile: string; usage: AgentUsage | null };
  /** Its work goes to a pull request, opened or updated next (docs/pull-requests.md). */
  pullRequest?: boolean;
  /** Completed with a question it asked a person: its task waits for the answer (docs/mcp.md). */
  question?: string;
}

/** A task's pull request, as its events name it. */
interface PrPayload {
  number: number;
  url: string;
}

interface HostPayload {
  hostId: number;
  name: string;
  version: string;
}

interface PlatformPayload {
  platform: string;
  [key: string]: unknown;
}

export interface EventPayloads {
  created: { title: string; status: TaskStatus; origin: Origin };
  edited: { fields: string[] };
  deleted: Record<string, never>;
  /** `via: "mcp"`: its agent wrote it through its MCP tools (docs/mcp.md). */
  commented: { commentId: number; author: string; text: string; via?: 'mcp' };
  promoted: { after: string | null; reason?: string };
  claimed: { profile: string; waitedMs?: number; retry?: boolean };
  spawned: { pid: number; profile: string };
  adopted: { pid: number };
  heartbeat: { note?: string };
  claim_extended: { until: number };
  completed: RunEndPayload;
  blocked: RunEndPayload | { reason: string; parent: string };
  crashed: RunEndPayload;
  protocol_violation: RunEndPayload;
  rate_limited: RunEndPayload;
  timed_out: RunEndPayload;
  stale: RunEndPayload;
  reclaimed: RunEndPayload;
  archived: RunEndPayload | TerminationReport;
  spawn_failed: RunEndPayload;
  interrupted: RunEndPayload;
  lost: RunEndPayload;
  /** Its run passed the task's budget and was ended (docs/budgets.md); the task is blocked. */
  budget_exceeded: RunEndPayload;
  /** A ready task at or over its budget was not started: blocked (`reason` says which figure). */
  budget_reached: { reason: string; budget: Budget; spent: Spent };
  /** Its spend passed 80 % of a figure of its budget. */
  budget_warning: { reason: string; budget: Budget; spent: Spent };
  /** Its budget was raised (POST /tasks/:id/budget); `unblocked` follows when it was blocked by it. */
  budget_raised: { budget: Budget; by: string };
  host_joined: HostPayload;
  host_dead: HostPayload & { lostRuns: number };
  unblocked: { status: TaskStatus };
  /** More to do (docs/workers.md): the task runs again with `text` as its instructions. */
  followed_up: { text: string; author: string; status: TaskStatus };
  /**
   * A task in review was approved (docs/workers.md): done; or, with `revision`, a task's first
   * run was approved (docs/mcp.md).
   */
  approved: { by: string; revision?: number };
  /** Its first run waits for a person's approval of this revision (docs/mcp.md). */
  approval_requested: { revision: number };
  /** An edit after its approval: the new revision waits for a new one. */
  approval_invalidated: { revision: number; fields: string[] };
  /** Its agent asked a person (ask_human, docs/mcp.md). */
  question_asked: { question: string; options: string[] | null };
  /** A person answered its agent's question: it runs again with the answer. */
  answered: { text: string; author: string; status: TaskStatus };
  /** Its agent reported how far it got (report_progress). */
  progress: { note: string; percent: number | null };
  /** An agent's call of a gatehouse tool was cancelled by the agent's own approval rules. */
  mcp_call_cancelled: { tool: string; message: string };
  /** A task in review was sent back with what to change: it runs again with `text`. */
  changes_requested: { text: string; author: string; status: TaskStatus };
  reclaim_deferred: TerminationReport & { op: string; pids?: number[] };
  gave_up: { failures?: number; outcome?: string; reason: string | null };
  worker_terminated: { pids: number[]; sigkill: boolean; survived: boolean };
  notification_dropped: { platform: string; channel: string; eventId: number; reason: string };
  platform_connected: PlatformPayload;
  platform_disconnected: PlatformPayload;
  breaker_opened: PlatformPayload;
  breaker_half_open: PlatformPayload;
  breaker_closed: PlatformPayload;
  platform_paused: PlatformPayload;
  platform_resumed: PlatformPayload;
  /** The repository's own checkout changed while the run was live (docs/workspaces.md). */
  workspace_escape: { repo: string; paths: string[] };
  /** What the task's workspace held was kept before its removal. */
  workspace_preserved: { ref: string; commit: string | null; why: string };
  /** The task's workspace was made again on this host: its host was gone (docs/workspaces.md). */
  workspace_recreated: { fromHost: string; branch: string | null; from: string };
  /** The run's worktree was gone when it ended (removed by hand, or by anything else). */
  workspace_lost: { path: string };
  /** The task's workspace was removed (its content kept, or all of it elsewhere). */
  workspace_removed: { why: string; branchDeleted: boolean };
  /** A rate limit holds the profile: none of its runs starts before `until` (docs/agents.md). */
  profile_held: { profile: string; until: number; reason: string };
  /** An operator ended a profile's hold early. */
  profile_released: { profile: string; by: string };
  /** The agent no longer had the session a run asked to resume: the next run starts afresh. */
  session_resume_failed: { sessionId: string; error: string };
  /** A pull request was opened for the task's branch, or one the forge had was adopted. */
  pr_opened: PrPayload & { provider: string; draft: boolean };
  pr_adopted: PrPayload & { provider: string };
  /** The branch had nothing base lacks: no pull request, the task is done. */
  pr_skipped: { reason: string };
  pr_merged: PrPayload & { mergeCommit: string | null };
  pr_closed: PrPayload;
  pr_reopened: PrPayload;
  /** What the forge said went back to the agent as a follow-up (round `round`). */
  pr_feedback: PrPayload & {
    round: number;
    source: 'checks' | 'review';
    checks?: string[];
    comments?: string[];
  };
  /** A comment from an author outside feedback.from: never sent to the agent. */
  pr_comment_ignored: PrPayload & { id: string; by: string; association: string };
  /** The forge could not be read or written; nothing moved (reason: what failed). */
  pr_sync_failed: { reason: string; status: number | null; message: string };
  /** The task was archived with its pull request open: the PR stays on the forge. */
  pr_left_open: PrPayload;
  /** Its checks passed on the head for long enough (doneWhen: checks_passed): done. */
  pr_checks_passed: PrPayload & { headSha: string };
  /** The pull request cannot go on by itself: the task is blocked for a person. */
  pr_blocked: { reason: string };
  /** A forge's signed webhook delivery: the host that syncs these tasks' PRs does so now. */
  pr_delivery: { repo: string; event: string; delivery: string; tasks: string[] };
  /**
   * A schedule's firing made no task (docs/schedules.md): its previous task still open, or it
   * was missed while no daemon ran and is more than a period old. taskId: the open one.
   */
  schedule_skipped: { schedule: string; fireTime: string; reason: 'previous open' | 'missed' };
  schedule_paused: { schedule: string; by: string };
  /** Given to attempts (docs/attempts.md): the tasks made, whether a judge and autoPick follow. */
  attempts_started: { attempts: string[]; judge: boolean; autoPick: 'judge' | null };
  /** The judge ran in this attempt's workspace. */
  judged: { exitCode: number | null; of: string };
  /** Every attempt ended (and was judged): the task waits in review for a pick. */
  attempts_ended: { attempts: string[] };
  /**
   * An attempt was kept: its work on `branch`, the others archived; the task is done, or waits
   * in review for the pull request opened from `branch` (`pullRequest`).
   */
  attempt_picked: {
    attempt: string;
    branch: string | null;
    by: string;
    /** Absent on events recorded before picks had pull requests. */
    pullRequest?: boolean;
  };
  schedule_resumed: { schedule: string; by: string };
}

export type EventKind = keyof EventPayloads;

interface KindMeaning {
  /** After it there may be something new to dispatch (a ready task, a freed slot). */
  wakesDispatch: boolean;
  /** Told to the task's subscribed chats and home channels, with this phrase; null: not told. */
  notice: string | null;
}

const quiet: KindMeaning = { wakesDispatch: false, notice: null };
const wakes: KindMeaning = { wakesDispatch: true, notice: null };

/** The one table of what each kind means; `satisfies` makes a missing kind a type error. */
export const EVENT_KINDS = {
  created: wakes,
  edited: wakes,
  deleted: quiet,
  commented: quiet,
  promoted: wakes,
  claimed: quiet,
  spawned: quiet,
  adopted: quiet,
  heartbeat: quiet,
  claim_extended: quiet,
  completed: { wakesDispatch: true, notice: 'is done' },
  blocked: { wakesDispatch: true, notice: 'is blocked' },
  crashed: { wakesDispatch: true, notice: 'crashed' },
  protocol_violation: wakes,
  rate_limited: wakes,
  timed_out: { wakesDispatch: true, notice: 'timed out' },
  stale: wakes,
  reclaimed: wakes,
  archived: { wakesDispatch: true, notice: 'was archived' },
  spawn_failed: wakes,
  interrupted: quiet,
  lost: { wakesDispatch: true, notice: 'was lost with its host' },
  budget_exceeded: { wakesDispatch: true, notice: 'was stopped at its budget' },
  budget_reached: { wakesDispatch: false, notice: 'is blocked by its budget' },
  budget_warning: { wakesDispatch: false, notice: 'has spent 80 % of its budget' },
  budget_raised: wakes,
  host_joined: quiet,
  host_dead: quiet,
  unblocked: wakes,
  followed_up: wakes,
  approved: { wakesDispatch: true, notice: 'was approved' },
  approval_requested: { wakesDispatch: false, notice: 'needs approval' },
  approval_invalidated: { wakesDispatch: false, notice: 'was edited and needs approval again' },
  question_asked: { wakesDispatch: false, notice: 'asks' },
  answered: wakes,
  progress: quiet,
  mcp_call_cancelled: quiet,
  changes_requested: wakes,
  reclaim_deferred: quiet,
  gave_up: { wakesDispatch: true, notice: 'was given up after repeated failures' },
  worker_terminated: quiet,
  notification_dropped: quiet,
  platform_connected: quiet,
  platform_disconnected: quiet,
  breaker_opened: quiet,
  breaker_half_open: quiet,
  breaker_closed: quiet,
  platform_paused: quiet,
  platform_resumed: quiet,
  workspace_escape: quiet,
  workspace_preserved: quiet,
  workspace_removed: quiet,
  workspace_lost: quiet,
  profile_held: quiet,
  profile_released: wakes,
  session_resume_failed: quiet,
  workspace_recreated: quiet,
  pr_opened: { wakesDispatch: false, notice: 'has a pull request' },
  pr_adopted: { wakesDispatch: false, notice: 'has a pull request' },
  pr_skipped: { wakesDispatch: true, notice: 'is done' },
  pr_merged: { wakesDispatch: true, notice: 'was merged' },
  pr_closed: { wakesDispatch: false, notice: 'had its pull request closed without merging' },
  pr_reopened: { wakesDispatch: false, notice: 'had its pull request reopened' },
  pr_feedback: { wakesDispatch: true, notice: 'got feedback on its pull request' },
  pr_comment_ignored: quiet,
  pr_sync_failed: quiet,
  pr_left_open: quiet,
  pr_checks_passed: { wakesDispatch: true, notice: 'is done' },
  pr_blocked: { wakesDispatch: false, notice: 'is blocked' },
  pr_delivery: quiet,
  schedule_skipped: quiet,
  schedule_paused: quiet,
  attempts_started: wakes,
  judged: quiet,
  attempts_ended: { wakesDispatch: false, notice: 'has its attempts ready to compare' },
  attempt_picked: { wakesDispatch: true, notice: 'has an attempt picked' },
  schedule_resumed: quiet,
} as const satisfies Record<EventKind, KindMeaning>;

export const ALL_EVENT_KINDS = Object.keys(EVENT_KINDS) as EventKind[];

export const WAKE_KINDS: ReadonlySet<EventKind> = new Set(
  ALL_EVENT_KINDS.filter((k) => EVENT_KINDS[k].wakesDispatch),
);

/** Kinds told to chats: the task's terminal events (docs/platforms.md). */
export const NOTIFY_KINDS: readonly EventKind[] = ALL_EVENT_KINDS.filter(
  (k) => EVENT_KINDS[k].notice !== null,
);

export function isEventKind(kind: string): kind is EventKind {
  return Object.hasOwn(EVENT_KINDS, kind);
}

/** An event as stored and streamed; `kind` narrows `payload`. */
export type BoardEvent = {
  [K in EventKind]: {
    id: number;
    taskId: string | null;
    runId: string | null;
    kind: K;
    payload: EventPayloads[K];
    at: number;
  };
}[EventKind];

/** An event about to be written: the store assigns id and time. */
export type NewEvent<K extends EventKind = EventKind> = {
  taskId: string | null;
  runId: string | null;
  kind: K;
  payload: EventPayloads[K];
};

/** Records an event of the move's transaction: written, with its id, when the group commits. */
export type Emit = <K extends EventKind>(event: NewEvent<K>) => void;
