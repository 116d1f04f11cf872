// What every route answers, as named schemas: the OpenAPI document's components, and what the
// contract test checks real answers against. They document; answers are serialized as is.
import { Type, type TSchema } from '../../schema-types.js';
import { ALL_EVENT_KINDS } from '../../kanban/model/events.js';
import { HOST_STATES, RUN_OUTCOMES, TASK_STATUSES } from '../../kanban/model/types.js';

const closed = { additionalProperties: false } as const;
const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const literals = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));
const millis = Type.Integer({ description: 'epoch milliseconds' });

export const ErrorBody = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.String({ description: 'stable code, see docs/errors.md' }),
        message: Type.String(),
      },
      closed,
    ),
  },
  { ...closed, $id: 'Error' },
);

export const OriginSchema = Type.Union(
  [
    Type.Object({ kind: Type.Literal('api') }, closed),
    Type.Object({ kind: Type.Literal('cli') }, closed),
    Type.Object(
      { kind: Type.Literal('platform'), platform: Type.String(), channel: Type.String() },
      closed,
    ),
  ],
  { $id: 'Origin' },
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
  },
  { ...closed, $id: 'Run' },
);

export const TaskDetailSchema = Type.Object(
  {
    ...taskFields,
    runs: Type.Array(Type.Ref(RunSchema)),
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

export const EventSchema = Type.Object(
  {
    id: Type.Integer(),
    taskId: nullable(Type.String()),
    runId: nullable(Type.String()),
    kind: literals(ALL_EVENT_KINDS),
    payload: Type.Object({}, { additionalProperties: true, description: 'depends on the kind' }),
    at: millis,
  },
  { ...closed, $id: 'Event' },
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
  TaskSchema,
  RunSchema,
  TaskDetailSchema,
  EventSchema,
  CommentSchema,
  PlatformSchema,
  ReadySchema,
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
export const HostList = Type.Object({ hosts: Type.Array(Type.Ref(HostSchema)) }, closed);
export const Task = Type.Ref(TaskSchema);
export const TaskDetail = Type.Ref(TaskDetailSchema);
export const Comment = Type.Ref(CommentSchema);
export const Platform = Type.Ref(PlatformSchema);
export const Ready = Type.Ref(ReadySchema);

/** Errors any route can answer: bad input, no token, a Host that is not ours, a failure. */
const ALWAYS = [400, 401, 421, 500] as const;

const REASONS: Record<number, string> = {
  400: 'bad input (malformed JSON, wrong types, unknown fields, too deep)',
  401: 'missing or wrong token',
  403: 'a token of another task, or a web page of another origin',
  404: 'no such task, run or platform',
  409: 'not allowed in the current state (or an old run token)',
  413: 'body too large',
  415: 'not application/json',
  421: 'Host is not this gatehouse (server.allowedHosts)',
  500: 'internal error (says nothing internal)',
  503: 'unavailable now (storage, a platform, shutting down); see Retry-After',
};

/**
 * A route's OpenAPI description: tag, summary, its answers (the shared Error schema for every
 * error status) and, for public routes, `security: []`.
 */
export function describe(
  tag: string,
  summary: string,
  ok: Record<number, TSchema | { description: string; content?: object }>,
  errors: readonly number[] = [],
  opts: { public?: boolean; worker?: boolean } = {},
) {
  const response: Record<number, unknown> = {};
  for (const [status, schema] of Object.entries(ok))
    response[Number(status)] = { description: 'success', ...schema };
  for (const status of [...new Set([...ALWAYS, ...errors])])
    response[status] = { ...Type.Ref(ErrorBody), description: REASONS[status] ?? 'error' };
  return {
    tags: [tag],
    summary,
    response,
    ...(opts.public ? { security: [] } : {}),
    ...(opts.worker ? { security: [{ runToken: [] }] } : {}),
  };
}
