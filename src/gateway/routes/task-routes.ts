// /tasks: board CRUD, operator transitions, runs and events of a task.
import type { Static } from '../../schema-types.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import type { Board } from '../../kanban/board.js';
import type { OperatorActions } from '../../kanban/operator-actions.js';
import { publicRun } from '../../kanban/store/run-store.js';
import type { Origin } from '../../kanban/model/types.js';
import {
  CommentBody,
  CreateTaskBody,
  EventsQuery,
  ListTasksQuery,
  PatchTaskBody,
  ReclaimBody,
  TaskIdParams,
} from './schemas.js';
import { Comment, EventList, RunList, Task, TaskDetail, TaskList, describe } from './responses.js';

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
}

type IdRequest = FastifyRequest<{ Params: Static<typeof TaskIdParams> }>;

function originOf(req: FastifyRequest): Origin {
  return req.headers['x-gatehouse-client'] === 'cli' ? { kind: 'cli' } : { kind: 'api' };
}

async function checkAssignee(
  served: () => Promise<readonly string[]>,
  assignee: string | null | undefined,
): Promise<void> {
  if (!assignee) return;
  const profiles = await served();
  if (!profiles.includes(assignee)) {
    throw new AppError(
      'VALIDATION_FAILED',
      `assignee "${assignee}" is not a worker profile (${profiles.join(', ')})`,
    );
  }
}

export function taskRoutes(app: FastifyInstance, deps: TaskRouteDeps): void {
  const { board, operator } = deps;
  const params = TaskIdParams;

  app.post<{ Body: Static<typeof CreateTaskBody> }>(
    '/tasks',
    {
      schema: {
        body: CreateTaskBody,
        ...describe('tasks', 'Create a task', { 201: Task }, [404, 413, 415]),
      },
    },
    async (req, reply) => {
      await checkAssignee(deps.profiles, req.body.assignee);
      return reply.code(201).send(await board.create(req.body, originOf(req)));
    },
  );

  app.get<{ Querystring: Static<typeof ListTasksQuery> }>(
    '/tasks',
    {
      schema: {
        querystring: ListTasksQuery,
        ...describe('tasks', 'List tasks, oldest first, a page at a time', { 200: TaskList }),
      },
    },
    (req) =>
      board.list({
        status: req.query.status,
        assignee: req.query.assignee,
        limit: req.query.limit ?? 100,
        cursor: req.query.cursor,
        order: req.query.order,
      }),
  );

  app.get(
    '/tasks/:id',
    {
      schema: {
        params,
        ...describe('tasks', 'One task with its runs and live worker', { 200: TaskDetail }, [404]),
      },
    },
    async (req: IdRequest) => {
      const { task, runs } = await board.detail(req.params.id);
      // The task read is this request's own: extended in place, not copied (26 fields).
      return Object.assign(task, {
        runs: runs.map(publicRun),
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
        ...describe('tasks', 'Edit a task', { 200: Task }, [404, 409, 413, 415]),
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
        ...describe(
          'tasks',
          'Delete an archived task (and its run folders)',
          { 204: { description: 'deleted' } },
          [404, 409],
        ),
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
        ...describe(
          'tasks',
          'Archive a task, terminating its worker first',
          { 200: Task },
          [404, 409],
        ),
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
        ...describe('tasks', 'Release a running task to ready', { 200: Task }, [404, 409, 415]),
      },
    },
    (req) => operator.reclaim(req.params.id, req.body?.force ?? false),
  );

  app.post(
    '/tasks/:id/unblock',
    { schema: { params, ...describe('tasks', 'Unblock a task', { 200: Task }, [404, 409]) } },
    (req: IdRequest) => operator.unblock(req.params.id),
  );

  app.post<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof CommentBody> }>(
    '/tasks/:id/comments',
    {
      schema: {
        params,
        body: CommentBody,
        ...describe('tasks', 'Comment on a task', { 201: Comment }, [404, 413, 415]),
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(await board.comment(req.params.id, req.body.text, req.body.author ?? 'operator')),
  );

  app.get(
    '/tasks/:id/runs',
    {
      schema: {
        params,
        ...describe('history', 'A task’s runs, oldest first', { 200: RunList }, [404]),
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
        ...describe('history', 'A task’s events', { 200: EventList }, [404]),
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
