// /tasks: board CRUD, operator transitions, runs and events of a task.
import type { Static } from '../../schema-types.js';
import { totalUsage } from '../../agents/usage.js';
import type { Budget } from '../../config/schema.js';
import { spentByRuns } from '../../kanban/model/budget.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import type { ApprovalRules } from '../../kanban/approval-rules.js';
import type { Board } from '../../kanban/board.js';
import { awaitsApproval } from '../../kanban/model/asks.js';
import type { OperatorActions } from '../../kanban/operator-actions.js';
import { publicRun } from '../../kanban/store/records/run.js';
import { checkAssignee, originOf } from './route-checks.js';
import { attemptsRequest } from './attempts-request.js';
import { IdempotencyHeaders, KEYED_ERRORS, keyedRequest, sendAnswer } from './idempotency.js';
import type { Task as TaskRecord } from '../../kanban/model/types.js';
import {
  CommentBody,
  AnswerBody,
  ApproveBody,
  ChangesBody,
  FollowUpBody,
  CountTasksQuery,
  CreateTaskBody,
  EventsQuery,
  ListTasksQuery,
  PatchTaskBody,
  ReclaimBody,
  TaskIdParams,
} from './schemas.js';
import {
  Comment,
  EventList,
  RunList,
  Task,
  TaskCounts,
  TaskDetail,
  TaskList,
  describe,
} from './responses.js';

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

  app.post(
    '/tasks/:id/archive',
    {
      schema: {
        params,
        ...describe({
          tag: 'tasks',
          id: 'archiveTask',
          summary: 'Archive a task, terminating its worker first',
          description:
            'A running task’s worker and its children are ended first (on another host, by that host, and the answer waits for it). 409 when a worker survived SIGKILL.',
          ok: { 200: Task },
          errors: [404, 409],
        }),
      },
    },
    (req: IdRequest) => operator.archive(req.params.id),
  );

  app.post<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof ReclaimBody> }>(
    '/tasks/:id/reclaim',
    {
      schema: {
        params,
        body: ReclaimBody,
        ...describe({
          tag: 'tasks',
          id: 'reclaimTask',
          summary: 'Release a running task to ready',
          description:
            'Ends the running worker and its children, then puts the task back to `ready`. 409 for a task that is not running (unless `force`).',
          ok: { 200: Task },
          errors: [404, 409],
        }),
      },
    },
    (req) => operator.reclaim(req.params.id, req.body?.force ?? false),
  );

  app.post(
    '/tasks/:id/unblock',
    {
      schema: {
        params,
        ...describe({
          tag: 'tasks',
          id: 'unblockTask',
          summary: 'Unblock a task',
          description:
            'A blocked task goes back to `ready` (or `todo` while a parent is not done), its failure count reset. 409 for a task that is not blocked.',
          ok: { 200: Task },
          errors: [404, 409],
        }),
      },
    },
    (req: IdRequest) => operator.unblock(req.params.id),
  );

  app.post<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof FollowUpBody> }>(
    '/tasks/:id/follow-up',
    {
      schema: {
        params,
        body: FollowUpBody,
        headers: IdempotencyHeaders,
        ...describe({
          tag: 'tasks',
          id: 'followUpTask',
          summary: 'Send a done, blocked or review task back with more to do',
          description:
            'The task goes back to `ready` (or `todo` while a parent is not done), its failure count reset, with `text` as its next run’s instructions (`instructions` on the task, in the run’s task.json and the file `$GATEHOUSE_INSTRUCTIONS_FILE`), in the same workspace; a `followed_up` event. 409 for a task that is not done, blocked or in review. With an `Idempotency-Key`, a retry gets the first answer and sends nothing back twice.',
          ok: { 200: Task },
          errors: [404, 409, ...KEYED_ERRORS],
        }),
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const author = req.body.author ?? 'operator';
      const key = keyedRequest(req, deps.idempotencyMs);
      if (key) return sendAnswer(reply, await board.followUpKeyed(id, req.body.text, author, key));
      return board.followUp(id, req.body.text, author);
    },
  );

  app.post<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof ApproveBody> }>(
    '/tasks/:id/approve',
    {
      schema: {
        params,
        body: ApproveBody,
        ...describe({
          tag: 'tasks',
          id: 'approveTask',
          summary: 'Approve a task in review, or a task’s first run',
          description:
            'A task whose completed run waits in `review` goes to `done`, its children promoted as by a completion; an `approved` event with `by` (default "operator"). A task whose first run waits for approval (`approval` on the task, docs/mcp.md) is approved at its current revision (or the `revision` given, refused with 409 if it was edited since) and goes to `ready` (or stays in `todo` for its parents); 403 when its profile’s `approvers` do not name `api`, or with `notSelf` for a task made through the API. 409 for a task that is neither.',
          ok: { 200: Task },
          errors: [403, 404, 409],
        }),
      },
    },
    async (req) => {
      const task = await board.get(req.params.id);
      if (!awaitsApproval(task.approval))
        return board.approve(req.params.id, req.body?.by ?? 'operator');
      const refusal = deps.approvals.refusal(task, 'api');
      if (refusal) throw new AppError('FORBIDDEN', refusal);
      return board.approveRun(req.params.id, req.body?.by ?? 'api', req.body?.revision ?? null);
    },
  );

  app.post<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof AnswerBody> }>(
    '/tasks/:id/answer',
    {
      schema: {
        params,
        body: AnswerBody,
        ...describe({
          tag: 'tasks',
          id: 'answerTask',
          summary: 'Answer the question a blocked task’s agent asked',
          description:
            'A task blocked on its agent’s question (`blockKind: "question"`, docs/mcp.md) goes back to `ready` (or `todo` while a parent is not done) with the answer as its next run’s instructions, resuming the agent’s session; an `answered` event. 409 for a task that waits for no answer.',
          ok: { 200: Task },
          errors: [404, 409],
        }),
      },
    },
    (req) => board.answer(req.params.id, req.body.text, req.body.author ?? 'operator'),
  );

  app.post<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof ChangesBody> }>(
    '/tasks/:id/request-changes',
    {
      schema: {
        params,
        body: ChangesBody,
        ...describe({
          tag: 'tasks',
          id: 'requestChanges',
          summary: 'Send a task in review back with what to change',
          description:
            'The task goes back to `ready` (or `todo` while a parent is not done) with `text` as its next run’s instructions and as a comment, in the same workspace, resuming an agent’s session; a `changes_requested` event. Not counted as a failure. 409 for a task that is not in review.',
          ok: { 200: Task },
          errors: [404, 409],
        }),
      },
    },
    (req) => board.requestChanges(req.params.id, req.body.text, req.body.author ?? 'operator'),
  );

  app.post<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof CommentBody> }>(
    '/tasks/:id/comments',
    {
      schema: {
        params,
        body: CommentBody,
        headers: IdempotencyHeaders,
        ...describe({
          tag: 'tasks',
          id: 'commentOnTask',
          summary: 'Comment on a task',
          description:
            'Adds a comment (author defaults to "operator"); it is in the task’s events as `commented`. With an `Idempotency-Key`, a retry gets the first answer and adds nothing.',
          ok: { 201: Comment },
          errors: [404, ...KEYED_ERRORS],
          replays: true,
        }),
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const author = req.body.author ?? 'operator';
      const key = keyedRequest(req, deps.idempotencyMs);
      if (key) return sendAnswer(reply, await board.commentKeyed(id, req.body.text, author, key));
      return reply.code(201).send(await board.comment(id, req.body.text, author));
    },
  );

  app.get(
    '/tasks/:id/runs',
    {
      schema: {
        params,
        ...describe({
          tag: 'history',
          id: 'listTaskRuns',
          summary: 'A task’s runs, oldest first',
          description: 'Every run of the task with its outcome, exit status, host and peaks.',
          ok: { 200: RunList },
          errors: [404],
        }),
      },
    },
    async (req: IdRequest) => ({
      runs: (await board.runs.forTask((await board.get(req.params.id)).id)).map(publicRun),
    }),
  );

  app.get<{ Params: Static<typeof TaskIdParams>; Querystring: Static<typeof EventsQuery> }>(
    '/tasks/:id/events',
    {
      schema: {
        params,
        querystring: EventsQuery,
        ...describe({
          tag: 'history',
          id: 'listTaskEvents',
          summary: 'A task’s events',
          description: 'The task’s events after `after`, oldest first, at most `limit`.',
          ok: { 200: EventList },
          errors: [404],
        }),
      },
    },
    async (req) => {
      const { id } = await board.get(req.params.id);
      await board.checkAfter(req.query.after ?? 0);
      return {
        events: await board.events.listForTask(id, req.query.after ?? 0, req.query.limit ?? 1000),
      };
    },
  );
}
