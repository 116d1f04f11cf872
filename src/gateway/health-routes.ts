// GET /health (the process serves) and GET /ready (each subsystem's report).
import type { FastifyInstance } from 'fastify';

export type SubsystemStatus = 'ok' | 'degraded' | 'down';

export interface ReadyReport {
  ready: boolean;
  subsystems: Record<string, { status: SubsystemStatus; detail?: string }>;
  platforms: { name: string; state: string; status: SubsystemStatus }[];
  board: Record<string, number>;
}

export function healthRoutes(app: FastifyInstance, readiness: () => ReadyReport): void {
  app.get('/health', { config: { auth: 'none' } }, () => ({ status: 'ok' }));
  app.get('/ready', async (_req, reply) => {
    const report = readiness();
    return reply.code(report.ready ? 200 : 503).send(report);
  });
}
