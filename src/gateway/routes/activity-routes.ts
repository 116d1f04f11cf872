// What the board is doing: every live worker (on any host), and runs finished over the last hour
// or day, counted by the database (the dashboard's workers view and throughput chart).
import type { FastifyInstance } from 'fastify';
import type { Static } from '../../schema-types.js';
import type { Board } from '../../kanban/board.js';
import { RUN_OUTCOMES, type RunOutcome } from '../../kanban/model/types.js';
import { Type } from '../../schema-types.js';
import { describe } from '../schemas/describe.js';
import { closed, nullable } from '../schemas/parts.js';
import { ThroughputQuery } from '../schemas/requests.js';

export interface ProfileLoad {
  name: string;
  /** Workers of the profile running on this host. */
  running: number;
  /** The profile's cap on this host (null: only workers.maxConcurrent). */
  maxConcurrent: number | null;
  /** The profile of tasks with no assignee. */
  isDefault: boolean;
}

export interface ActivityDeps {
  board: Board;
  /** This host's live sample of a task's worker, or null (not running here). */
  workerInfo: (
    taskId: string,
  ) => { pid: number; cpuPercent: number | null; rssBytes: number | null } | null;
  /** This host's profiles with their caps and running workers. */
  profileLoad: () => ProfileLoad[];
}

/** Each window: its length and its buckets' (60 of a minute, 96 of a quarter hour). */
const WINDOWS = {
  hour: { ms: 3_600_000, bucketMs: 60_000 },
  day: { ms: 86_400_000, bucketMs: 900_000 },
} as const;

const WorkerView = Type.Object(
  {
    runId: Type.String(),
    taskId: Type.String(),
    title: Type.String(),
    profile: Type.String(),
    host: nullable(Type.String()),
    pid: nullable(Type.Integer()),
    startedAt: Type.Integer({ description: 'epoch milliseconds' }),
    cpuPercent: nullable(Type.Number({ description: 'now, for workers of this host' })),
    rssBytes: nullable(Type.Integer({ description: 'now, for workers of this host' })),
    cpuPercentMax: nullable(Type.Number()),
    rssBytesMax: nullable(Type.Integer()),
  },
  closed,
);

const WorkersAnswer = Type.Object(
  {
    workers: Type.Array(WorkerView),
    profiles: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          running: Type.Integer(),
          maxConcurrent: nullable(Type.Integer()),
          isDefault: Type.Boolean({ description: 'runs the tasks with no assignee' }),
        },
        closed,
      ),
      { description: 'this host’s profiles: running workers and cap' },
    ),
    holds: Type.Array(
      Type.Object(
        {
          profile: Type.String(),
          until: Type.Integer({ description: 'epoch milliseconds: no run of it starts before' }),
          reason: Type.String({ description: 'what the agent said of its rate limit' }),
        },
        closed,
      ),
      {
        description:
          'profiles a rate-limited agent run holds, on every host (POST /profiles/:name/release ends one)',
      },
    ),
  },
  closed,
);

const ThroughputAnswer = Type.Object(
  {
    window: Type.Union([Type.Literal('hour'), Type.Literal('day')]),
    from: Type.Integer({ description: 'epoch milliseconds, the first bucket’s start' }),
    bucketMs: Type.Integer(),
    buckets: Type.Array(
      Type.Object(
        {
          at: Type.Integer({ description: 'the bucket’s start, epoch milliseconds' }),
          outcomes: Type.Record(Type.String(), Type.Integer(), {
            description: 'runs ended in the bucket, by outcome (absent: none)',
          }),
        },
        closed,
      ),
      { description: 'every bucket of the window, oldest first, empty ones included' },
    ),
    totals: Type.Record(Type.String(), Type.Integer(), {
      description: 'runs ended in the window, by outcome',
    }),
  },
  closed,
);

export function activityRoutes(app: FastifyInstance, deps: ActivityDeps): void {
  app.get(
    '/workers',
    {
      schema: describe({
        tag: 'history',
        id: 'listWorkers',
        summary: 'Every live worker, on any host',
        description:
          'Each run not ended yet with its task, host, pid and start; CPU and memory now for this host’s workers, and the peaks every host records. With this host’s profiles, their running workers and caps.',
        ok: { 200: WorkersAnswer },
      }),
    },
    async () => {
      const runs = await deps.board.runs.open();
      const workers = runs.map((run) => {
        const here = deps.workerInfo(run.taskId);
        const live = here !== null && here.pid === run.pid;
        return {
          runId: run.id,
          taskId: run.taskId,
          title: run.title,
          profile: run.profile,
          host: run.host,
          pid: run.pid,
          startedAt: run.startedAt,
          cpuPercent: live ? here.cpuPercent : null,
          rssBytes: live ? here.rssBytes : null,
          cpuPercentMax: run.cpuPercentMax,
          rssBytesMax: run.rssBytesMax,
        };
      });
      const holds = (await deps.board.holds.active(deps.board.clock.wall())).map((h) => ({
        profile: h.profile,
        until: h.until,
        reason: h.reason,
      }));
      return { workers, profiles: deps.profileLoad(), holds };
    },
  );

  app.get<{ Querystring: Static<typeof ThroughputQuery> }>(
    '/stats/throughput',
    {
      schema: {
        querystring: ThroughputQuery,
        ...describe({
          tag: 'history',
          id: 'getThroughput',
          summary: 'Runs finished over the last hour or day, by outcome',
          description:
            'Counted from the runs the board keeps (not from what a page saw): 60 buckets of a minute for `hour`, 96 of a quarter hour for `day`, each with its runs by outcome.',
          ok: { 200: ThroughputAnswer },
        }),
      },
    },
    async (req) => {
      const { ms, bucketMs } = WINDOWS[req.query.window];
      const now = deps.board.clock.wall();
      const from = Math.floor((now - ms) / bucketMs) * bucketMs + bucketMs;
      const rows = await deps.board.runs.endedByBucket(from, bucketMs);
      const buckets = [];
      for (let at = from; at <= now; at += bucketMs)
        buckets.push({ at, outcomes: {} as Partial<Record<RunOutcome, number>> });
      const totals: Partial<Record<RunOutcome, number>> = {};
      for (const row of rows) {
        const bucket = buckets[Math.floor((Number(row.at) - from) / bucketMs)];
        if (!bucket || !RUN_OUTCOMES.includes(row.outcome)) continue;
        bucket.outcomes[row.outcome] = (bucket.outcomes[row.outcome] ?? 0) + row.n;
        totals[row.outcome] = (totals[row.outcome] ?? 0) + row.n;
      }
      return { window: req.query.window, from, bucketMs, buckets, totals };
    },
  );
}
