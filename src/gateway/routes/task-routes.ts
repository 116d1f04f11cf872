// /tasks: board CRUD, operator transitions, runs and events of a task.
import type { Static } from '@sinclair/typebox';
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

export interface WorkerSample {
  pid: number;
  cpuPercent: number | null;
  rssBytes: number | null;
}

export interface TaskRouteDeps {
  board: Board;
  operator: OperatorActions;
  profiles: readonly string[];
  workerInfo: (taskId: string) => WorkerSample | null;
}

type IdRequest = FastifyRequest<{ Params: Static<typeof TaskIdParams> }>;

function originOf(req: FastifyRequest): Origin {
  return req.headers['x-gatehouse-client'] === 'cli' ? { kind: 'cli' } : { kind: 'api' };
}

function checkAssignee(profiles: readonly string[], assignee: string | null | undefined): void {
  if (assignee && !profiles.includes(assignee)) {
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
    { schema: { body: CreateTaskBody } },
    async (req, reply) => {
      checkAssignee(deps.profiles, req.body.assignee);
      return reply.code(201).send(board.create(req.body, originOf(req)));
    },
  );

  app.get<{ Querystring: Static<typeof ListTasksQuery> }>(
    '/tasks',
    { schema: { querystring: ListTasksQuery } },
    (req) =>
      board.list({
        status: req.query.status,
        assignee: req.query.assignee,
        limit: req.query.limit ?? 100,
        cursor: req.query.cursor,
        order: req.query.order,
      }),
  );

  app.get('/tasks/:id', { schema: { params } }, (req: IdRequest) => {
    const task = board.get(req.params.id);
    return {
      ...task,
      runs: board.runs.forTask(task.id).map(publicRun),
      worker: deps.workerInfo(task.id),
    };
  });

  app.patch<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof PatchTaskBody> }>(
    '/tasks/:id',
    { schema: { params, body: PatchTaskBody } },
    (req) => {
      checkAssignee(deps.profiles, req.body.assignee);
      return board.edit(req.params.id, req.body);
    },
  );

  app.delete('/tasks/:id', { schema: { params } }, async (req: IdRequest, reply) => {
    operator.delete(req.params.id);
    return reply.code(204).send();
  });

  app.post('/tasks/:id/archive', { schema: { params } }, (req: IdRequest) =>
    operator.archive(req.params.id),
  );

  app.post<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof ReclaimBody> }>(
    '/tasks/:id/reclaim',
    { schema: { params, body: ReclaimBody } },
    (req) => operator.reclaim(req.params.id, req.body?.force ?? false),
  );

  app.post('/tasks/:id/unblock', { schema: { params } }, (req: IdRequest) =>
    operator.unblock(req.params.id),
  );

  app.post<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof CommentBody> }>(
    '/tasks/:id/comments',
    { schema: { params, body: CommentBody } },
    async (req, reply) =>
      reply
        .code(201)
        .send(board.comment(req.params.id, req.body.text, req.body.author ?? 'operator')),
  );

  app.get('/tasks/:id/runs', { schema: { params } }, (req: IdRequest) => ({
    runs: board.runs.forTask(board.get(req.params.id).id).map(publicRun),
  }));

  app.get<{ Params: Static<typeof TaskIdParams>; Querystring: Static<typeof EventsQuery> }>(
    '/tasks/:id/events',
    { schema: { params, querystring: EventsQuery } },
    (req) => ({
      events: board.events.listForTask(
        board.get(req.params.id).id,
        req.query.after ?? 0,
        req.query.limit ?? 1000,
      ),
    }),
  );
}
