// Worker routes: complete, block and heartbeat, each authorised by the run's own token.
import type { Static } from '../../schema-types.js';
import type { FastifyInstance } from 'fastify';
import type { WorkerActions } from '../../kanban/worker-actions.js';
import { bearerToken } from '../auth.js';
import { Task, describe } from './responses.js';
import { BlockBody, CompleteBody, HeartbeatBody, TaskIdParams } from './schemas.js';

type P = Static<typeof TaskIdParams>;

export function workerRoutes(app: FastifyInstance, worker: WorkerActions): void {
  const config = { auth: 'worker' as const };
  app.post<{ Params: P; Body: Static<typeof CompleteBody> }>(
    '/tasks/:id/complete',
    {
      config,
      schema: {
        params: TaskIdParams,
        body: CompleteBody,
        ...describe(
          'workers',
          'Complete the run (its verdict)',
          { 200: Task },
          [403, 404, 409, 413, 415],
          { worker: true },
        ),
      },
    },
    (req) => worker.complete(req.params.id, bearerToken(req), req.body ?? {}),
  );
  app.post<{ Params: P; Body: Static<typeof BlockBody> }>(
    '/tasks/:id/block',
    {
      config,
      schema: {
        params: TaskIdParams,
        body: BlockBody,
        ...describe(
          'workers',
          'Block the task with a reason (its verdict)',
          { 200: Task },
          [403, 404, 409, 413, 415],
          { worker: true },
        ),
      },
    },
    (req) => worker.block(req.params.id, bearerToken(req), req.body.reason),
  );
  app.post<{ Params: P; Body: Static<typeof HeartbeatBody> }>(
    '/tasks/:id/heartbeat',
    {
      config,
      schema: {
        params: TaskIdParams,
        body: HeartbeatBody,
        ...describe(
          'workers',
          'Show progress and refresh the lease',
          { 200: Task },
          [403, 404, 409, 415],
          { worker: true },
        ),
      },
    },
    (req) => worker.heartbeat(req.params.id, bearerToken(req), req.body?.note),
  );
}
