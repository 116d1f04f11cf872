// GET /health (the process serves) and GET /ready (each subsystem's report).
import { Type } from '../schema-types.js';
import type { FastifyInstance } from 'fastify';
import { Ready, describe } from './routes/responses.js';

export type SubsystemStatus = 'ok' | 'degraded' | 'down';

export interface ReadyReport {
  ready: boolean;
  subsystems: Record<string, { status: SubsystemStatus; detail?: string }>;
  platforms: { name: string; state: string; status: SubsystemStatus }[];
  board: Record<string, number>;
}

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
          'Each subsystem (board, dispatcher, platforms) with ok, degraded or down, and the number of tasks in each status. 503 with the same body when the daemon is not ready.',
        ok: { 200: Ready, 503: { ...Ready, description: 'not ready' } },
      }),
    },
    async (_req, reply) => {
      const report = await readiness();
      return reply.code(report.ready ? 200 : 503).send(report);
    },
  );
}

const Health = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false });
