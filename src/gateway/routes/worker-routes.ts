// Worker routes: complete, block and heartbeat, each authorised by the run's own token.
import type { Static } from '../../schema-types.js';
import type { FastifyInstance } from 'fastify';
import type { WorkerActions } from '../../kanban/worker-actions.js';
import { bearerToken } from '../auth.js';
import { Task } from '../schemas/entities.js';
import { describe } from '../schemas/describe.js';
import { BlockBody, CompleteBody, HeartbeatBody, TaskIdParams } from '../schemas/requests.js';

type P = Static<typeof TaskIdParams>;

/** A worker route's description: its answers are the same for all three. */
function workerRoute(id: string, summary: string, description: string) {
  return describe({
    tag: 'workers',
    id,
    summary,
    description,
    ok: { 200: Task },
    errors: [{ status: 403, reason: 'a run token of another task' }, 404, 409],
    worker: true,
  });
}

export function workerRoutes(app: FastifyInstance, worker: WorkerActions): void {
  const config = { auth: 'worker' as const };
  app.post<{ Params: P; Body: Static<typeof CompleteBody> }>(
    '/tasks/:id/complete',
    {
      config,
      schema: {
        params: TaskIdParams,
        body: CompleteBody,
        ...workerRoute(
          'completeTask',
          'Complete the run (its verdict)',
          'Ends the run as completed with a summary and result; the task goes to done. 409 for a run token that is not the task’s current run (a stale attempt): nothing changes.',
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
        ...workerRoute(
          'blockTask',
          'Block the task with a reason (its verdict)',
          'Ends the run and blocks the task with a reason for an operator to read. 409 for a stale run token.',
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
        ...workerRoute(
          'heartbeatTask',
          'Show progress and refresh the lease',
          'Records a note and pushes the run’s deadline for staleness forward. 409 for a stale run token.',
        ),
      },
    },
    (req) => worker.heartbeat(req.params.id, bearerToken(req), req.body?.note),
  );
}
