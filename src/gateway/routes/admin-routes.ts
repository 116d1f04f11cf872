// /admin/restart and /admin/stop: planned restart (exit 75) or stop (exit 0) after the reply is sent.
import type { FastifyInstance } from 'fastify';
import { ExitCode } from '../exit-codes.js';

export function adminRoutes(
  app: FastifyInstance,
  requestStop: (code: number, reason: string) => void,
): void {
  const plan =
    (code: number, reason: string) => (_req: unknown, reply: { raw: NodeJS.EventEmitter }) => {
      reply.raw.once('finish', () => requestStop(code, reason));
      return { status: 'stopping', exitCode: code };
    };
  app.post('/admin/restart', plan(ExitCode.restart, 'restart requested over the API'));
  app.post('/admin/stop', plan(ExitCode.ok, 'stop requested over the API'));
}
