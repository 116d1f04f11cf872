// Each event kind's payload as a schema, for the OpenAPI document: `Event` is a union on
// `kind`, so generated clients narrow the payload by kind. The compile-time check at the end
// keeps every schema equal to the payload type the board writes (model/events.ts).
import { BudgetFields, nullable, SpentFields } from './parts.js';
import { closed, Type, type Static, type TSchema } from '../../schema-types.js';
import type { EventKind, EventPayloads } from '../../kanban/model/events.js';
import { TASK_STATUSES } from '../../kanban/model/types.js';

const Optional = Type.Optional;
const int = Type.Integer();
const str = Type.String();
const bool = Type.Boolean();
const status = Type.Union(TASK_STATUSES.map((s) => Type.Literal(s)));

/** Where a task came from (the API, the CLI, a platform's channel). */
export const OriginSchema = Type.Union(
  [
    Type.Object({ kind: Type.Literal('api') }, closed),
    Type.Object({ kind: Type.Literal('cli') }, closed),
    Type.Object(
      {
        kind: Type.Literal('platform'),
        platform: str,
        channel: str,
        user: Type.Optional(
          Type.String({ description: 'who wrote it, as the platform names them' }),
        ),
      },
      closed,
    ),
    Type.Object(
      {
        kind: Type.Literal('mcp'),
        runId: Type.String({ description: 'the agent run that made it over MCP (docs/mcp.md)' }),
      },
      closed,
    ),
    Type.Object(
      {
        kind: Type.Literal('schedule'),
        name: Type.String({ description: 'the schedule whose firing made it (docs/schedules.md)' }),
        fireTime: Type.String({ description: 'the firing’s time, ISO 8601' }),
      },
      closed,
    ),
  ],
  { $id: 'Origin' },
);

const RunEnd = Type.Object(
  {
    exitCode: nullable(int),
    signal: nullable(str),
    error: Optional(str),
    summary: Optional(str),
    reason: Optional(str),
    prevPid: nullable(int),
    failures: int,
    durationMs: Optional(nullable(int)),
    terminated: Optional(bool),
    sigkill: Optional(bool),
    survived: Optional(bool),
    ended: Optional(Type.Array(int)),
    forced: Optional(bool),
    review: Optional(bool),
    pullRequest: Optional(bool),
    question: Optional(str),
    agent: Optional(
      Type.Object(
        {
          profile: str,
          usage: nullable(
            Type.Object(
              {
                inputTokens: nullable(int),
                outputTokens: nullable(int),
                cachedTokens: nullable(int),
                costUsd: nullable(Type.Number()),
                numTurns: nullable(int),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { description: 'how the run ended' },
);

const terminationFields = {
  prevPid: nullable(int),
  terminated: bool,
  sigkill: bool,
  survived: bool,
};
const Termination = Type.Object(terminationFields, {
  description: 'what a termination did to the worker’s process group',
});

const Host = { hostId: int, name: str, version: str };
const PlatformPayload = Type.Object({ platform: str }, { additionalProperties: true });
const Pr = { number: int, url: str };

/** One schema per kind; a kind missing here is a type error. */
export const EVENT_PAYLOADS = {
  created: Type.Object({ title: str, status, origin: Type.Ref(OriginSchema) }),
  edited: Type.Object({ fields: Type.Array(str) }),
  deleted: Type.Object({}),
  commented: Type.Object({
    commentId: int,
    author: str,
    text: str,
    via: Type.Optional(Type.Literal('mcp')),
  }),
  promoted: Type.Object({ after: nullable(str), reason: Optional(str) }),
  claimed: Type.Object({ profile: str, waitedMs: Optional(Type.Number()), retry: Optional(bool) }),
  spawned: Type.Object({ pid: int, profile: str }),
  adopted: Type.Object({ pid: int }),
  heartbeat: Type.Object({ note: Optional(str) }),
  claim_extended: Type.Object({ until: int }),
  completed: RunEnd,
  blocked: Type.Union([RunEnd, Type.Object({ reason: str, parent: str })]),
  crashed: RunEnd,
  protocol_violation: RunEnd,
  rate_limited: RunEnd,
  timed_out: RunEnd,
  stale: RunEnd,
  reclaimed: RunEnd,
  archived: Type.Union([RunEnd, Termination]),
  spawn_failed: RunEnd,
  interrupted: RunEnd,
  lost: RunEnd,
  budget_exceeded: RunEnd,
  budget_reached: Type.Object({ reason: str, budget: BudgetFields, spent: SpentFields }),
  budget_warning: Type.Object({ reason: str, budget: BudgetFields, spent: SpentFields }),
  budget_raised: Type.Object({ budget: BudgetFields, by: str }),
  host_joined: Type.Object(Host),
  host_dead: Type.Object({ ...Host, lostRuns: int }),
  unblocked: Type.Object({ status }),
  followed_up: Type.Object({ text: str, author: str, status }),
  approved: Type.Object({ by: str, revision: Type.Optional(int) }),
  approval_requested: Type.Object({ revision: int }),
  approval_invalidated: Type.Object({ revision: int, fields: Type.Array(str) }),
  question_asked: Type.Object({
    question: str,
    options: Type.Union([Type.Array(str), Type.Null()]),
  }),
  answered: Type.Object({ text: str, author: str, status }),
  progress: Type.Object({ note: str, percent: Type.Union([Type.Number(), Type.Null()]) }),
  mcp_call_cancelled: Type.Object({ tool: str, message: str }),
  changes_requested: Type.Object({ text: str, author: str, status }),
  reclaim_deferred: Type.Object({
    ...terminationFields,
    op: str,
    pids: Optional(Type.Array(int)),
  }),
  gave_up: Type.Object({
    failures: Optional(int),
    outcome: Optional(str),
    reason: nullable(str),
  }),
  worker_terminated: Type.Object({ pids: Type.Array(int), sigkill: bool, survived: bool }),
  notification_dropped: Type.Object({ platform: str, channel: str, eventId: int, reason: str }),
  platform_connected: PlatformPayload,
  platform_disconnected: PlatformPayload,
  breaker_opened: PlatformPayload,
  breaker_half_open: PlatformPayload,
  breaker_closed: PlatformPayload,
  platform_paused: PlatformPayload,
  platform_resumed: PlatformPayload,
  workspace_escape: Type.Object({ repo: str, paths: Type.Array(str) }),
  workspace_preserved: Type.Object({ ref: str, commit: nullable(str), why: str }),
  workspace_removed: Type.Object({ why: str, branchDeleted: bool }),
  workspace_lost: Type.Object({ path: str }),
  workspace_recreated: Type.Object({ fromHost: str, branch: nullable(str), from: str }),
  profile_held: Type.Object({ profile: str, until: Type.Integer(), reason: str }),
  profile_released: Type.Object({ profile: str, by: str }),
  session_resume_failed: Type.Object({ sessionId: str, error: str }),
  pr_opened: Type.Object({ ...Pr, provider: str, draft: bool }),
  pr_adopted: Type.Object({ ...Pr, provider: str }),
  pr_skipped: Type.Object({ reason: str }),
  pr_merged: Type.Object({ ...Pr, mergeCommit: nullable(str) }),
  pr_closed: Type.Object(Pr),
  pr_reopened: Type.Object(Pr),
  pr_feedback: Type.Object({
    ...Pr,
    round: int,
    source: Type.Union([Type.Literal('checks'), Type.Literal('review')]),
    checks: Optional(Type.Array(str)),
    comments: Optional(Type.Array(str)),
  }),
  pr_comment_ignored: Type.Object({ ...Pr, id: str, by: str, association: str }),
  pr_sync_failed: Type.Object({ reason: str, status: nullable(int), message: str }),
  pr_left_open: Type.Object(Pr),
  pr_checks_passed: Type.Object({ ...Pr, headSha: str }),
  pr_blocked: Type.Object({ reason: str }),
  pr_delivery: Type.Object({ repo: str, event: str, delivery: str, tasks: Type.Array(str) }),
  schedule_skipped: Type.Object({
    schedule: str,
    fireTime: str,
    reason: Type.Union([Type.Literal('previous open'), Type.Literal('missed')]),
  }),
  schedule_paused: Type.Object({ schedule: str, by: str }),
  attempts_started: Type.Object({
    attempts: Type.Array(str),
    judge: bool,
    autoPick: nullable(Type.Literal('judge')),
  }),
  judged: Type.Object({ exitCode: nullable(int), of: str }),
  attempts_ended: Type.Object({ attempts: Type.Array(str) }),
  attempt_picked: Type.Object({
    attempt: str,
    branch: nullable(str),
    by: str,
    /** Absent on events recorded before picks opened pull requests. */
    pullRequest: Optional(bool),
  }),
  schedule_resumed: Type.Object({ schedule: str, by: str }),
} satisfies Record<EventKind, TSchema>;

/** Each kind's event as the API answers it: `payload` narrowed by `kind`. */
export const EventSchema = Type.Union(
  (Object.keys(EVENT_PAYLOADS) as EventKind[]).map((kind) =>
    Type.Object(
      {
        id: int,
        taskId: nullable(str),
        runId: nullable(str),
        kind: Type.Literal(kind),
        payload: EVENT_PAYLOADS[kind],
        at: Type.Integer({ description: 'epoch milliseconds' }),
      },
      closed,
    ),
  ),
  { $id: 'Event', description: 'an event; its payload depends on its kind' },
);

/** Both ways assignable: the schema says exactly what the board writes. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** The kinds whose schema and payload type differ; never when they all agree. */
type Mismatched = {
  [K in EventKind]: Same<Static<(typeof EVENT_PAYLOADS)[K]>, EventPayloads[K]> extends true
    ? never
    : K;
}[EventKind];
// A compile error naming the kind whose schema no longer matches its payload type.
const agree: [Mismatched] extends [never] ? true : Mismatched = true;
void agree;
