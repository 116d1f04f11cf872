// What every route answers, as named schemas: the OpenAPI document's components, and what the
// contract test checks real answers against. They document; answers are serialized as is.
import { BudgetFields, nullable, SpentFields } from './parts.js';
import { closed, Type } from '../../schema-types.js';
import { ERROR_STATUS } from '../../errors.js';
import { EventSchema, OriginSchema } from './events.js';
import { HOST_STATES, RUN_OUTCOMES, TASK_STATUSES } from '../../kanban/model/types.js';
import { WORKSPACE_KINDS, WORKSPACE_STATES } from '../../workspaces/types.js';

const literals = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));
const millis = Type.Integer({ description: 'epoch milliseconds' });

export const ErrorBody = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.Union(
          Object.keys(ERROR_STATUS).map((code) => Type.Literal(code)),
          { description: 'stable code, see docs/errors.md' },
        ),
        message: Type.String(),
      },
      closed,
    ),
  },
  // Not "Error": generated clients would shadow the global Error with it.
  { ...closed, $id: 'ApiError' },
);

const WorkspaceSchema = Type.Object(
  {
    kind: literals(WORKSPACE_KINDS),
    path: Type.String(),
    repo: nullable(Type.String()),
    branch: nullable(Type.String()),
    base: nullable(Type.String()),
    host: Type.String({ description: 'the host that made it' }),
    state: literals(WORKSPACE_STATES),
    preservedRef: nullable(
      Type.String({ description: 'where its content was kept before its removal' }),
    ),
  },
  { ...closed, $id: 'Workspace' },
);

const PullRequestSchema = Type.Object(
  {
    provider: literals(['github', 'gitlab', 'gitea'] as const),
    number: Type.Integer(),
    url: Type.String(),
    state: literals(['open', 'merged', 'closed'] as const),
    draft: Type.Boolean(),
    headSha: nullable(Type.String()),
    checks: literals(['pending', 'passing', 'failing', 'none'] as const),
    review: literals(['none', 'approved', 'changes_requested'] as const),
    rounds: Type.Integer({ description: 'feedback rounds sent back to the agent' }),
    syncedAt: nullable(millis),
  },
  {
    ...closed,
    $id: 'PullRequest',
    description: 'the task’s pull request as the forge last said (docs/pull-requests.md)',
  },
);

const RunWorkspaceSchema = Type.Object(
  {
    headBefore: nullable(Type.String()),
    headAfter: nullable(Type.String()),
    dirty: Type.Boolean(),
    filesChanged: Type.Integer(),
    insertions: Type.Integer(),
    deletions: Type.Integer(),
    partial: Type.Optional(
      Type.Boolean({ description: 'too many untracked files to count their lines' }),
    ),
  },
  { ...closed, $id: 'RunWorkspace', description: 'changes against the base, committed or not' },
);

const UsageSchema = Type.Object(
  {
    inputTokens: nullable(Type.Integer()),
    outputTokens: nullable(Type.Integer()),
    cachedTokens: nullable(Type.Integer()),
    costUsd: nullable(Type.Number()),
    numTurns: nullable(Type.Integer()),
  },
  {
    ...closed,
    $id: 'AgentUsage',
    description: 'tokens and cost as the agent printed them (null: the kind prints none)',
  },
);

const RunAgentSchema = Type.Object(
  {
    kind: Type.String(),
    model: nullable(Type.String()),
    sessionId: nullable(
      Type.String({ description: 'the agent’s session, resumed by a follow-up' }),
    ),
    resumed: nullable(Type.String({ description: 'the session this run was asked to resume' })),
    resumeFailed: Type.Boolean(),
    usage: nullable(Type.Ref(UsageSchema)),
  },
  { ...closed, $id: 'RunAgent', description: 'an agent run’s session and usage (docs/agents.md)' },
);

const taskFields = {
  id: Type.String({ pattern: '^t_[0-9a-f]{12}$' }),
  title: Type.String(),
  body: Type.String(),
  assignee: nullable(Type.String()),
  status: literals(TASK_STATUSES),
  priority: Type.Integer(),
  parents: Type.Array(Type.String()),
  createdAt: millis,
  updatedAt: millis,
  startedAt: nullable(millis),
  completedAt: nullable(millis),
  maxRuntimeSeconds: nullable(Type.Number()),
  maxRetries: nullable(Type.Integer()),
  consecutiveFailures: Type.Integer(),
  lastFailureError: nullable(Type.String()),
  result: Type.Unknown({ description: 'what the worker reported, any JSON' }),
  summary: nullable(Type.String()),
  currentRunId: nullable(Type.String()),
  blockReason: nullable(Type.String()),
  notBefore: nullable(millis),
  origin: Type.Ref(OriginSchema),
  repo: nullable(Type.String({ description: 'the repository it asked for (workspaces.repos)' })),
  model: nullable(
    Type.String({ description: 'the model its agent profile runs it with; null: the profile’s' }),
  ),
  review: nullable(
    Type.Boolean({
      description: 'its completed runs wait in `review` for a person; null: as its profile says',
    }),
  ),
  instructions: nullable(
    Type.String({ description: 'what its next run is asked to do besides the task (a follow-up)' }),
  ),
  workspace: nullable(Type.Ref(WorkspaceSchema)),
  pr: nullable(Type.Ref(PullRequestSchema)),
  blockKind: nullable(
    Type.Literal('question', {
      description: 'blocked until a person answers its agent’s question (POST /tasks/:id/answer)',
    }),
  ),
  question: nullable(
    Type.Object(
      {
        text: Type.String(),
        options: nullable(Type.Array(Type.String())),
        runId: Type.String(),
        askedAt: millis,
      },
      { ...closed, description: 'the question its agent asked (ask_human), not answered yet' },
    ),
  ),
  progress: nullable(
    Type.Object(
      {
        note: Type.String(),
        percent: nullable(Type.Number({ minimum: 0, maximum: 100 })),
        runId: Type.String(),
        at: millis,
      },
      { ...closed, description: 'the last progress its agent reported (report_progress)' },
    ),
  ),
  budget: nullable(
    Type.Object(BudgetFields.properties, {
      ...closed,
      description: 'its own budget (docs/budgets.md); null: its profile’s, if any',
    }),
  ),
  schedule: nullable(
    Type.Object(
      { name: Type.String(), fireTime: Type.String({ description: 'ISO 8601' }) },
      { ...closed, description: 'the schedule firing that made it (docs/schedules.md)' },
    ),
  ),
  awaiting: nullable(
    Type.Union([Type.Literal('approval'), Type.Literal('attempts')], {
      description:
        'in todo: approval, its first run waits for a person’s approval (POST /tasks/:id/approve); attempts, its attempts run (docs/attempts.md)',
    }),
  ),
  attemptOf: nullable(
    Type.String({ description: 'the task this one is an attempt of (docs/attempts.md)' }),
  ),
  attempts: nullable(
    Type.Object(
      {
        ids: Type.Array(Type.String()),
        judge: nullable(Type.Object({ command: Type.Array(Type.String()) }, closed)),
        autoPick: nullable(Type.Literal('judge')),
        picked: nullable(Type.String()),
        branch: nullable(Type.String({ description: 'where the picked attempt’s work is kept' })),
      },
      { ...closed, description: 'its attempts, when given to several (docs/attempts.md)' },
    ),
  ),
  judge: nullable(
    Type.Object(
      { exitCode: nullable(Type.Integer()), output: Type.String(), at: millis },
      { ...closed, description: 'what the judge said of this attempt' },
    ),
  ),
  approval: nullable(
    Type.Object(
      {
        revision: Type.Integer({
          description: 'of what it asks: title, body, assignee, repo, model',
        }),
        approvedRevision: nullable(Type.Integer()),
        by: nullable(Type.String()),
        at: nullable(millis),
      },
      {
        ...closed,
        description:
          'its first run waits for a person (approval "before_run"); approved when approvedRevision is revision',
      },
    ),
  ),
};

export const TaskSchema = Type.Object(taskFields, { ...closed, $id: 'Task' });

export const RunSchema = Type.Object(
  {
    id: Type.String({ pattern: '^r_[0-9a-f]{12}$' }),
    taskId: Type.String(),
    profile: Type.String(),
    /** The host that ran it (cluster.hostName); null for runs recorded before hosts were. */
    host: nullable(Type.String()),
    pid: nullable(Type.Integer()),
    pgid: nullable(Type.Integer()),
    startTime: nullable(Type.Integer()),
    startedAt: millis,
    endedAt: nullable(millis),
    outcome: nullable(literals(RUN_OUTCOMES)),
    exitCode: nullable(Type.Integer()),
    signal: nullable(Type.String()),
    error: nullable(Type.String()),
    summary: nullable(Type.String()),
    cpuPercentMax: nullable(Type.Number()),
    rssBytesMax: nullable(Type.Integer()),
    logPath: Type.String(),
    workspace: nullable(Type.Ref(RunWorkspaceSchema)),
    agent: nullable(Type.Ref(RunAgentSchema)),
  },
  { ...closed, $id: 'Run' },
);

export const TaskDetailSchema = Type.Object(
  {
    ...taskFields,
    runs: Type.Array(Type.Ref(RunSchema)),
    usage: Type.Union([Type.Ref(UsageSchema), Type.Null()], {
      description: 'the sum of its agent runs’ usage, or null: no agent run printed one',
    }),
    budgetInForce: nullable(
      Type.Object(BudgetFields.properties, {
        ...closed,
        description:
          'the budget its runs are held to: its own, else its profile’s (docs/budgets.md)',
      }),
    ),
    spent: Type.Object(SpentFields.properties, {
      ...closed,
      description:
        'what its runs spent, as its budget counts it: dollars, input + output tokens, runs',
    }),
    children: Type.Array(Type.String(), {
      description: 'the tasks that have this one as a parent',
    }),
    worker: nullable(
      Type.Object(
        {
          pid: Type.Integer(),
          cpuPercent: nullable(Type.Number()),
          rssBytes: nullable(Type.Integer()),
        },
        closed,
      ),
    ),
  },
  { ...closed, $id: 'TaskDetail' },
);

export const CommentSchema = Type.Object(
  {
    id: Type.Integer(),
    taskId: Type.String(),
    author: Type.String(),
    text: Type.String(),
    at: millis,
  },
  { ...closed, $id: 'Comment' },
);

export const PlatformSchema = Type.Object(
  {
    name: Type.String(),
    type: literals(['webhook', 'telegram', 'matrix', 'slack', 'discord']),
    state: literals([
      'connecting',
      'connected',
      'retrying',
      'paused',
      'failed',
      'disabled',
      'standby',
    ]),
    homeChannel: nullable(Type.String()),
    breaker: Type.Object(
      {
        state: literals(['closed', 'half_open', 'open']),
        failures: Type.Integer(),
        rejects: Type.Integer(),
        timeouts: Type.Integer(),
        lastError: nullable(Type.String()),
        openedAt: nullable(millis),
        nextAttemptAt: nullable(millis),
        outageSince: nullable(millis),
        reopened: Type.Integer({ minimum: 0 }),
      },
      closed,
    ),
    counters: Type.Object(
      {
        sent: Type.Integer(),
        sendFailures: Type.Integer(),
        received: Type.Integer(),
        connects: Type.Integer(),
      },
      closed,
    ),
    nextRetryAt: nullable(millis),
  },
  { ...closed, $id: 'Platform' },
);

const statusLiteral = literals(['ok', 'degraded', 'down']);
export const ReadySchema = Type.Object(
  {
    ready: Type.Boolean(),
    subsystems: Type.Record(
      Type.String(),
      Type.Object({ status: statusLiteral, detail: Type.Optional(Type.String()) }, closed),
    ),
    platforms: Type.Array(
      Type.Object({ name: Type.String(), state: Type.String(), status: statusLiteral }, closed),
    ),
    board: Type.Record(Type.String(), Type.Integer()),
  },
  { ...closed, $id: 'Ready' },
);

/** /ready's 503: the same report, with the error every other refusal carries. */
export const NotReadySchema = Type.Object(
  {
    ...ReadySchema.properties,
    error: Type.Object(
      {
        code: Type.Union([Type.Literal('NOT_READY')], {
          description: 'stable code, see docs/errors.md',
        }),
        message: Type.String({ description: 'names each subsystem that is down' }),
      },
      closed,
    ),
  },
  { ...closed, $id: 'NotReady' },
);

export const HostSchema = Type.Object(
  {
    id: Type.Integer({ description: 'never reused, even after the host is declared dead' }),
    name: Type.String({ description: 'cluster.hostName' }),
    startedAt: millis,
    renewedAt: millis,
    leaseExpiresAt: Type.Integer({
      description: "epoch milliseconds by the database's clock (on SQLite, this machine's)",
    }),
    state: literals(HOST_STATES),
    running: Type.Integer({ description: 'workers running at the last renewal' }),
    capacity: Type.Integer({ description: 'workers.maxConcurrent' }),
    profiles: Type.Array(Type.String()),
    version: Type.String(),
  },
  { ...closed, $id: 'Host' },
);

/** Every named schema, registered once with app.addSchema (components.schemas). */
export const COMPONENTS = [
  ErrorBody,
  OriginSchema,
  WorkspaceSchema,
  PullRequestSchema,
  RunWorkspaceSchema,
  UsageSchema,
  RunAgentSchema,
  TaskSchema,
  RunSchema,
  TaskDetailSchema,
  EventSchema,
  CommentSchema,
  PlatformSchema,
  ReadySchema,
  NotReadySchema,
  HostSchema,
];

export const TaskList = Type.Object(
  { tasks: Type.Array(Type.Ref(TaskSchema)), nextCursor: nullable(Type.String()) },
  closed,
);
export const RunList = Type.Object({ runs: Type.Array(Type.Ref(RunSchema)) }, closed);
export const EventList = Type.Object({ events: Type.Array(Type.Ref(EventSchema)) }, closed);
export const PlatformList = Type.Object(
  { platforms: Type.Array(Type.Ref(PlatformSchema)) },
  closed,
);
export const TaskCounts = Type.Object(
  {
    counts: Type.Object(
      Object.fromEntries(TASK_STATUSES.map((s) => [s, Type.Integer({ minimum: 0 })])),
      closed,
    ),
  },
  closed,
);
export const HostList = Type.Object({ hosts: Type.Array(Type.Ref(HostSchema)) }, closed);

export const WorkspaceList = Type.Object(
  {
    workspaces: Type.Array(
      Type.Object(
        {
          taskId: nullable(Type.String()),
          path: Type.String(),
          kind: literals(['worktree', 'scratch', 'unknown']),
          repo: nullable(
            Type.String({ description: 'the repository that lists it as a worktree' }),
          ),
          host: Type.String(),
          state: literals(['active', 'orphaned', 'unknown']),
          bytes: Type.Integer(),
          dirty: Type.Boolean(),
        },
        closed,
      ),
    ),
  },
  closed,
);
export const Task = Type.Ref(TaskSchema);
export const TaskDetail = Type.Ref(TaskDetailSchema);
export const Comment = Type.Ref(CommentSchema);
export const Platform = Type.Ref(PlatformSchema);
export const Ready = Type.Ref(ReadySchema);
export const NotReady = Type.Ref(NotReadySchema);
