// GET /health (the process serves) and GET /ready (each subsystem's report).
import { Type } from '../schema-types.js';
import type { FastifyInstance } from 'fastify';
import { notReady, type ReadyReport } from './readiness.js';
import { NotReady, Ready } from './schemas/entities.js';
import { describe } from './schemas/describe.js';

export function healthRoutes(app: FastifyInstance, readiness: () => Promise<ReadyReport>): void {
  app.get(
    '/health',
    {
      config: { auth: 'none' },
      schema: describe({
        tag: 'operations',
        id: 'getHealth',
        summary: 'Liveness: 200 while the process serves',
        description:
          'Needs no token. Answers 200 as long as the process serves, even while the board database is unreachable (then /ready says why).',
        ok: { 200: Health },
        public: true,
      }),
    },
    () => ({ status: 'ok' }),
  );
  app.get(
    '/ready',
    {
      schema: describe({
        tag: 'operations',
        id: 'getReadiness',
        summary: 'Readiness of each subsystem and platform',
        description:
          'Each subsystem (board, dispatcher, platforms) with ok, degraded or down, and the number of tasks in each status. 503 when the daemon is not ready: the same report, with an error whose code is NOT_READY and whose message names what is down.',
        ok: { 200: Ready, 503: { ...NotReady, description: 'not ready' } },
      }),
    },
    async (_req, reply) => {
      const report = await readiness();
      return report.ready ? report : reply.code(503).send(notReady(report));
    },
  );
}

const Health = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false });
