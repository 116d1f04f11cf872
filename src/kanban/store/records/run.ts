// A run as both engines store it: its row, the record the daemon works with, and what the API shows.
import type { RunAgent } from '../../../agents/types.js';
import type { ProcessIdentity } from '../../../proc/index.js';
import type { RunEvidence } from '../../../workspaces/types.js';
import type { Run, RunOutcome } from '../../model/types.js';

export interface RunRow {
  seq: number;
  id: string;
  task_id: string;
  profile: string;
  token_hash: string;
  pid: number | null;
  pgid: number | null;
  start_time: number | null;
  boot_id: string | null;
  started_at: number;
  ended_at: number | null;
  outcome: RunOutcome | null;
  exit_code: number | null;
  signal: string | null;
  error: string | null;
  summary: string | null;
  cpu_percent_max: number | null;
  rss_bytes_max: number | null;
  log_path: string;
  /** 0 or 1 on SQLite, a boolean on PostgreSQL. */
  keep_descendants: number | boolean;
  proc_gone_at: number | null;
  files_pruned_at: number | null;
  group_held_until: number | null;
  host: string | null;
  host_id: number | string | null;
  workspace: string | null;
  agent: string | null;
}

/** A run with what only the daemon needs: the leader's identity and cleanup state. */
export interface RunRecord extends Run {
  bootId: string | null;
  keepDescendants: boolean;
  procGoneAt: number | null;
  /** When retention removed the run's folder (its log), or null. */
  filesPrunedAt: number | null;
  /** A start time by which its process group was proven the run's (see RunProof), or null. */
  groupHeldUntil: number | null;
  /** The registered host that runs it (null: from before hosts were recorded). */
  hostId: number | null;
}

/** A run as a claim creates it. */
export interface NewRun {
  id: string;
  taskId: string;
  profile: string;
  /** The host that runs it (cluster.hostName). */
  host: string;
  hostId: number;
  tokenHash: string;
  startedAt: number;
  logPath: string;
  keepDescendants: boolean;
}

export interface RunEnd {
  outcome: RunOutcome;
  exitCode?: number | null;
  signal?: string | null;
  error?: string | null;
  summary?: string | null;
  /** The process group is known to be gone (or is not ours to clean up). */
  procGone?: boolean;
  /** A start time by which the run's group was proven its own (its leader seen alive). */
  groupHeldUntil?: number | null;
  /** What the run did to its task's worktree. */
  workspace?: RunEvidence | null;
  /** An agent run's session and usage (docs/agents.md). */
  agent?: RunAgent | null;
}

/** A run not ended yet, with its task's title. */
export type OpenRun = RunRecord & { title: string };

/** How many runs ended with one outcome within one bucket of time. */
export interface EndedBucket {
  at: number;
  outcome: RunOutcome;
  n: number;
}

/** A run from its row, on either engine. */
export function toRecord(row: RunRow): RunRecord {
  return {
    id: row.id,
    taskId: row.task_id,
    profile: row.profile,
    host: row.host,
    hostId: row.host_id === null ? null : Number(row.host_id),
    pid: row.pid,
    pgid: row.pgid,
    startTime: row.start_time,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    outcome: row.outcome,
    exitCode: row.exit_code,
    signal: row.signal,
    error: row.error,
    summary: row.summary,
    cpuPercentMax: row.cpu_percent_max,
    rssBytesMax: row.rss_bytes_max,
    logPath: row.log_path,
    bootId: row.boot_id,
    keepDescendants: row.keep_descendants === 1 || row.keep_descendants === true,
    procGoneAt: row.proc_gone_at,
    filesPrunedAt: row.files_pruned_at,
    groupHeldUntil: row.group_held_until,
    workspace: row.workspace === null ? null : (JSON.parse(row.workspace) as RunEvidence),
    agent: row.agent == null ? null : (JSON.parse(row.agent) as RunAgent),
  };
}

/** The identity of the run's group leader, or null when none was recorded. */
export function leaderOf(run: RunRecord): ProcessIdentity | null {
  return run.pid !== null && run.startTime !== null && run.bootId !== null
    ? { pid: run.pid, startTime: run.startTime, bootId: run.bootId }
    : null;
}

/** The public shape of a run (what the API shows). */
export function publicRun(run: RunRecord): Run {
  const {
    bootId: _b,
    keepDescendants: _k,
    procGoneAt: _p,
    filesPrunedAt: _f,
    groupHeldUntil: _g,
    hostId: _h,
    ...shown
  } = run;
  return shown;
}
