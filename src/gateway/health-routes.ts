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
      schema: describe(
        'operations',
        'Liveness: 200 while the process serves',
        { 200: Health },
        [],
        {
          public: true,
        },
      ),
    },
    () => ({ status: 'ok' }),
  );
  app.get(
    '/ready',
    {
      schema: describe('operations', 'Readiness of each subsystem and platform', {
        200: Ready,
        503: { ...Ready, description: 'not ready' },
      }),
    },
    async (_req, reply) => {
      const report = await readiness();
      return reply.code(report.ready ? 200 : 503).send(report);
    },
  );
}

const Health = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false });
