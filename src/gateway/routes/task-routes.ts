// /tasks: the board's tasks made, listed, read, changed and deleted (an operator's moves are in
// task-action-routes.ts, a task's history in task-history-routes.ts).
import type { Static } from '../../schema-types.js';
import { totalUsage } from '../../agents/usage.js';
import type { Budget } from '../../config/schema.js';
import { spentByRuns } from '../../kanban/model/budget.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import type { ApprovalRules } from '../../kanban/approval-rules.js';
import type { Board } from '../../kanban/board.js';
import type { OperatorActions } from '../../kanban/operator-actions.js';
import { publicRun } from '../../kanban/store/records/run.js';
import { checkAssignee, originOf } from './route-checks.js';
import { attemptsRequest } from './attempts-request.js';
import { IdempotencyHeaders, KEYED_ERRORS, keyedRequest, sendAnswer } from './idempotency.js';
import type { Task as TaskRecord } from '../../kanban/model/types.js';
import {
  CountTasksQuery,
  CreateTaskBody,
  ListTasksQuery,
  PatchTaskBody,
  TaskIdParams,
} from '../schemas/requests.js';
import { Task, TaskCounts, TaskDetail, TaskList } from '../schemas/entities.js';
import { describe } from '../schemas/describe.js';

export interface WorkerSample {
  pid: number;
  cpuPercent: number | null;
  rssBytes: number | null;
}

export interface TaskRouteDeps {
  board: Board;
  operator: OperatorActions;
  /** The worker profiles a task may be assigned: those some host of the board runs. */
  profiles: () => Promise<readonly string[]>;
  workerInfo: (taskId: string) => WorkerSample | null;
  /** How long an Idempotency-Key holds (api.idempotencyHours). */
  idempotencyMs: number;
  /** Why a task may not ask for `repo` with this assignee (docs/workspaces.md), or null. */
  repoProblem: (repo: string, assignee: string | null) => string | null;
  /** Why a task may not ask for `model` with this assignee (docs/agents.md), or null. */
  modelProblem: (model: string, assignee: string | null) => string | null;
  /** Why a task with this assignee may not have this budget (docs/budgets.md), or null. */
  budgetProblem: (budget: Partial<Budget>, assignee: string | null) => string | null;
  /** The budget a task's profile gives it when it has none of its own. */
  profileBudget: (assignee: string | null) => Budget | null;
  /** Whose approval a task's first run waits for (docs/mcp.md). */
  approvals: ApprovalRules;
}

type IdRequest = FastifyRequest<{ Params: Static<typeof TaskIdParams> }>;

export function taskRoutes(app: FastifyInstance, deps: TaskRouteDeps): void {
  const { board, operator } = deps;
  const params = TaskIdParams;

  app.post<{ Body: Static<typeof CreateTaskBody> }>(
    '/tasks',
    {
      schema: {
        body: CreateTaskBody,
        headers: IdempotencyHeaders,
        ...describe({
          tag: 'tasks',
          id: 'createTask',
          summary: 'Create a task',
          description:
            'A task in `todo` (with parents not yet done) or `ready`. An unknown parent or an assignee no host runs is a 400. With an `Idempotency-Key`, a retry gets the first answer and creates nothing.',
          ok: { 201: Task },
          errors: KEYED_ERRORS,
          replays: true,
        }),
      },
    },
    async (req, reply) => {
      const key = keyedRequest(req, deps.idempotencyMs);
      // A retry is answered as the first was, whatever changed since (an assignee's profile).
      const replay = key && (await board.replayOf<TaskRecord>(key));
      if (replay) return sendAnswer(reply, replay);
      await checkAssignee(deps.profiles, req.body.assignee);
      const problem = req.body.repo
        ? deps.repoProblem(req.body.repo, req.body.assignee ?? null)
        : null;
      if (problem) throw new AppError('VALIDATION_FAILED', `repo: ${problem}`);
      const modelIssue = req.body.model
        ? deps.modelProblem(req.body.model, req.body.assignee ?? null)
        : null;
      if (modelIssue) throw new AppError('VALIDATION_FAILED', `model: ${modelIssue}`);
      const budgetIssue = req.body.budget
        ? deps.budgetProblem(req.body.budget, req.body.assignee ?? null)
        : null;
      if (budgetIssue) throw new AppError('VALIDATION_FAILED', `budget: ${budgetIssue}`);
      const { approval, attempts, ...fields } = req.body;
      const input = {
        ...fields,
        needsApproval: deps.approvals.needed(req.body.assignee ?? null, approval),
      };
      if (attempts) {
        const request = await attemptsRequest(
          attempts,
          { assignee: req.body.assignee ?? null, repo: req.body.repo ?? null },
          deps,
        );
        return sendAnswer(
          reply,
          await board.createWithAttempts(input, originOf(req), request, key),
        );
      }
      if (key) return sendAnswer(reply, await board.createKeyed(input, originOf(req), key));
      return reply.code(201).send(await board.create(input, originOf(req)));
    },
  );

  app.get<{ Querystring: Static<typeof ListTasksQuery> }>(
    '/tasks',
    {
      schema: {
        querystring: ListTasksQuery,
        ...describe({
          tag: 'tasks',
          id: 'listTasks',
          summary: 'List tasks, oldest first, a page at a time',
          description:
            'Filtered by status, assignee and `q` (a task id, or text anywhere in the title, ASCII letters in any case), `limit` at a time; `nextCursor` fetches the next page (null on the last). `order=desc` lists newest first.',
          ok: { 200: TaskList },
        }),
      },
    },
    (req) =>
      board.list({
        status: req.query.status,
        assignee: req.query.assignee,
        q: req.query.q,
        limit: req.query.limit ?? 100,
        cursor: req.query.cursor,
        order: req.query.order,
      }),
  );

  app.get<{ Querystring: Static<typeof CountTasksQuery> }>(
    '/tasks/counts',
    {
      schema: {
        querystring: CountTasksQuery,
        ...describe({
          tag: 'tasks',
          id: 'countTasks',
          summary: 'How many tasks are in each status',
          description:
            'Counted by the database, for the tasks the filters pick (as GET /tasks takes them): every status is present, 0 when none.',
          ok: { 200: TaskCounts },
        }),
      },
    },
    async (req) => ({
      counts: await board.counts({ assignee: req.query.assignee, q: req.query.q }),
    }),
  );

  app.get(
    '/tasks/:id',
    {
      schema: {
        params,
        ...describe({
          tag: 'tasks',
          id: 'getTask',
          summary: 'One task with its runs and live worker',
          description:
            'The task, every run it had (outcome, exit status, host, CPU and memory peaks), the tasks that wait on it (`children`) and, while it runs on this host, its worker’s pid, CPU and memory.',
          ok: { 200: TaskDetail },
          errors: [404],
        }),
      },
    },
    async (req: IdRequest) => {
      // One read (one statement on PostgreSQL): the task, its runs and the tasks waiting on it.
      const { task, runs, children } = await board.detail(req.params.id);
      // The task read is this request's own: extended in place, not copied (26 fields).
      return Object.assign(task, {
        runs: runs.map(publicRun),
        usage: totalUsage(runs.map((r) => r.agent?.usage)),
        budgetInForce: task.budget ?? deps.profileBudget(task.assignee),
        spent: spentByRuns(runs),
        children,
        worker: deps.workerInfo(task.id),
      });
    },
  );

  app.patch<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof PatchTaskBody> }>(
    '/tasks/:id',
    {
      schema: {
        params,
        body: PatchTaskBody,
        ...describe({
          tag: 'tasks',
          id: 'editTask',
          summary: 'Edit a task',
          description:
            'Changes title, body, assignee, priority, max runtime or max retries, in any status but archived (409).',
          ok: { 200: Task },
          errors: [404, 409],
        }),
      },
    },
    async (req) => {
      await checkAssignee(deps.profiles, req.body.assignee);
      return board.edit(req.params.id, req.body);
    },
  );

  app.delete(
    '/tasks/:id',
    {
      schema: {
        params,
        ...describe({
          tag: 'tasks',
          id: 'deleteTask',
          summary: 'Delete an archived task (and its run folders)',
          description: 'Only an archived task can be deleted (409 otherwise); its events stay.',
          ok: { 204: { description: 'deleted' } },
          errors: [404, 409],
        }),
      },
    },
    async (req: IdRequest, reply) => {
      const { foldersLeft } = await operator.delete(req.params.id);
      if (foldersLeft.length > 0)
        req.log.warn(
          { taskId: req.params.id, foldersLeft },
          'task deleted; run folders left for retention to remove',
        );
      return reply.code(204).send();
    },
  );
}
