// /tasks/:id/runs and /tasks/:id/events: a task's history.
import type { Static } from '../../schema-types.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Board } from '../../kanban/board.js';
import { publicRun } from '../../kanban/store/records/run.js';
import { EventsQuery, TaskIdParams } from '../schemas/requests.js';
import { EventList, RunList } from '../schemas/entities.js';
import { describe } from '../schemas/describe.js';

type IdRequest = FastifyRequest<{ Params: Static<typeof TaskIdParams> }>;

export function taskHistoryRoutes(app: FastifyInstance, board: Board): void {
  const params = TaskIdParams;

  app.get(
    '/tasks/:id/runs',
    {
      schema: {
        params,
        ...describe({
          tag: 'history',
          id: 'listTaskRuns',
          summary: 'A task’s runs, oldest first',
          description: 'Every run of the task with its outcome, exit status, host and peaks.',
          ok: { 200: RunList },
          errors: [404],
        }),
      },
    },
    async (req: IdRequest) => ({
      runs: (await board.runs.forTask((await board.get(req.params.id)).id)).map(publicRun),
    }),
  );

  app.get<{ Params: Static<typeof TaskIdParams>; Querystring: Static<typeof EventsQuery> }>(
    '/tasks/:id/events',
    {
      schema: {
        params,
        querystring: EventsQuery,
        ...describe({
          tag: 'history',
          id: 'listTaskEvents',
          summary: 'A task’s events',
          description: 'The task’s events after `after`, oldest first, at most `limit`.',
          ok: { 200: EventList },
          errors: [404],
        }),
      },
    },
    async (req) => {
      const { id } = await board.get(req.params.id);
      await board.checkAfter(req.query.after ?? 0);
      return {
        events: await board.events.listForTask(id, req.query.after ?? 0, req.query.limit ?? 1000),
      };
    },
  );
}
