// A task's workspace over HTTP (docs/workspaces.md): its worktree's change against the base.
import type { FastifyInstance } from 'fastify';
import type { Static } from '../../schema-types.js';
import { WorkspaceList } from '../schemas/entities.js';
import { describe } from '../schemas/describe.js';
import { TaskIdParams } from '../schemas/requests.js';

export interface WorkspaceRouteDeps {
  /** The task's worktree's unified diff against its base; AppError when there is none. */
  diff: (taskId: string) => Promise<string>;
  /** What is under this host's managed root (workspace-reconcile.ts). */
  workspaces: () => Promise<Static<typeof WorkspaceList>['workspaces']>;
}

export function workspaceRoutes(app: FastifyInstance, deps: WorkspaceRouteDeps): void {
  app.get(
    '/workspaces',
    {
      schema: describe({
        tag: 'operations',
        id: 'listWorkspaces',
        summary: 'What is under this host’s workspaces root',
        description:
          'Each directory under workspaces.root, from the last look (at start, every hour; looked at again when older than a minute, or when a workspace was made or removed since): its task, kind, size and whether it holds changes. `active`: its task’s; `orphaned`: no task wants it (removed at the next pass, its content preserved first); `unknown`: not a workspace gatehouse made, never touched.',
        ok: { 200: WorkspaceList },
      }),
    },
    async () => ({ workspaces: await deps.workspaces() }),
  );

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
