// Worker routes: complete, block and heartbeat, each authorised by the run's own token.
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { WorkerActions } from '../../kanban/worker-actions.js';
import { bearerToken } from '../auth.js';
import { BlockBody, CompleteBody, HeartbeatBody, TaskIdParams } from './schemas.js';

type P = Static<typeof TaskIdParams>;

export function workerRoutes(app: FastifyInstance, worker: WorkerActions): void {
  const config = { auth: 'worker' as const };
  app.post<{ Params: P; Body: Static<typeof CompleteBody> }>(
    '/tasks/:id/complete',
    { config, schema: { params: TaskIdParams, body: CompleteBody } },
    (req) => worker.complete(req.params.id, bearerToken(req), req.body ?? {}),
  );
  app.post<{ Params: P; Body: Static<typeof BlockBody> }>(
    '/tasks/:id/block',
    { config, schema: { params: TaskIdParams, body: BlockBody } },
    (req) => worker.block(req.params.id, bearerToken(req), req.body.reason),
  );
  app.post<{ Params: P; Body: Static<typeof HeartbeatBody> }>(
    '/tasks/:id/heartbeat',
    { config, schema: { params: TaskIdParams, body: HeartbeatBody } },
    (req) => worker.heartbeat(req.params.id, bearerToken(req), req.body?.note),
  );
}
