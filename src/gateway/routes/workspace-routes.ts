// A task's workspace over HTTP (SPEC 10): its worktree's change against the base.
import type { FastifyInstance } from 'fastify';
import type { Static } from '../../schema-types.js';
import { describe } from './responses.js';
import { TaskIdParams } from './schemas.js';

export interface WorkspaceRouteDeps {
  /** The task's worktree's unified diff against its base; AppError when there is none. */
  diff: (taskId: string) => Promise<string>;
}

export function workspaceRoutes(app: FastifyInstance, deps: WorkspaceRouteDeps): void {
  app.get<{ Params: Static<typeof TaskIdParams> }>(
    '/tasks/:id/diff',
    {
      schema: {
        params: TaskIdParams,
        ...describe({
          tag: 'tasks',
          id: 'getTaskDiff',
          summary: 'A task’s worktree against its base, as a unified diff (at most 2 MiB)',
          description:
            'Everything the task’s worktree changed against the branch it started from: commits, uncommitted and untracked files (ignored files aside). Cut at 2 MiB with a marker line. 404 for a task without a worktree (or one removed, or on another host), 409 while it is being made.',
          ok: {
            200: {
              description: 'the diff',
              content: { 'text/x-diff': { schema: { type: 'string' } } },
            },
          },
          errors: [404, 409],
        }),
      },
    },
    async (req, reply) =>
      reply.type('text/x-diff; charset=utf-8').send(await deps.diff(req.params.id)),
  );
}
