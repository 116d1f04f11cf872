// /admin/restart and /admin/stop: planned restart (exit 75) or stop (exit 0) after the reply is sent.
import { Type } from '../../schema-types.js';
import type { FastifyInstance } from 'fastify';
import { describe } from '../schemas/describe.js';
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
  const answer = Type.Object(
    { status: Type.Literal('stopping'), exitCode: Type.Integer() },
    { additionalProperties: false },
  );
  app.post(
    '/admin/restart',
    {
      schema: describe({
        tag: 'operations',
        id: 'restartDaemon',
        summary: 'Planned restart: drain, then exit 75',
        description:
          'Answers first, then shuts down in order and exits 75, which the systemd unit restarts; running workers are adopted by the next instance.',
        ok: { 200: answer },
      }),
    },
    plan(ExitCode.restart, 'restart requested over the API'),
  );
  app.post(
    '/admin/stop',
    {
      schema: describe({
        tag: 'operations',
        id: 'stopDaemon',
        summary: 'Planned stop: drain, then exit 0',
        description:
          'Answers first, then shuts down in order and exits 0, which the systemd unit leaves stopped; running workers keep running and are adopted at the next start.',
        ok: { 200: answer },
      }),
    },
    plan(ExitCode.ok, 'stop requested over the API'),
  );
}
