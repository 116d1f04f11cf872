// /events backfill, the /events/stream websocket, and run logs.
import type { Static } from '../../schema-types.js';
import { dirname } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import type { Board } from '../../kanban/board.js';
import { ALL_EVENT_KINDS, isEventKind } from '../../kanban/model/events.js';
import { readLogTail } from '../../kanban/dispatch/run-log.js';
import { runFile } from '../../kanban/dispatch/run-files.js';
import type { EventStreamHub } from '../event-stream.js';
import { EventList } from '../schemas/entities.js';
import { describe } from '../schemas/describe.js';
import { runWithFiles } from './run-lookup.js';
import { EventsQuery, LogQuery, RunIdParams, StreamQuery } from '../schemas/requests.js';

/** Where each websocket request's stream starts, settled before its upgrade. */
const starts = new WeakMap<FastifyRequest, number>();

export function eventRoutes(app: FastifyInstance, board: Board, hub: EventStreamHub): void {
  app.get<{ Querystring: Static<typeof EventsQuery> }>(
    '/events',
    {
      schema: {
        querystring: EventsQuery,
        ...describe({
          tag: 'history',
          id: 'listEvents',
          summary: 'Events after an id (backfill)',
          description:
            'Every host’s events in one strictly increasing id order, after `after`, at most `limit`. The websocket /events/stream carries the same events live and resumes from an id.',
          ok: { 200: EventList },
        }),
      },
    },
    async (req) => {
      await board.checkAfter(req.query.after ?? 0);
      return { events: await board.events.list(req.query.after ?? 0, req.query.limit ?? 100) };
    },
  );

  app.get<{ Params: Static<typeof RunIdParams>; Querystring: Static<typeof LogQuery> }>(
    '/runs/:runId/log',
    {
      schema: {
        params: RunIdParams,
        querystring: LogQuery,
        ...describe({
          tag: 'history',
          id: 'getRunLog',
          summary: 'The tail of a run’s log (at most 1 MiB)',
          description:
            'The last `tail` lines of what the run’s worker wrote to stdout and stderr (with `file=agent`, of what an agent run printed on stdout: its JSON lines; its stderr is the log). 404 for an unknown run, or one whose files retention removed.',
          ok: {
            200: {
              description: 'the log, as text',
              content: { 'text/plain': { schema: { type: 'string' } } },
            },
          },
          errors: [404],
        }),
      },
    },
    async (req, reply) => {
      const run = await runWithFiles(board, req.params.runId);
      const path =
        req.query.file === 'agent' ? runFile(dirname(run.logPath), 'agent.jsonl') : run.logPath;
      const text = await readLogTail(path, {
        lines: req.query.tail ?? 100,
        maxLineChars: 16_384,
      });
      return reply.type('text/plain; charset=utf-8').send(text);
    },
  );

  app.register(async (scope) => {
    scope.get<{ Querystring: Static<typeof StreamQuery> }>(
      '/events/stream',
      {
        websocket: true,
        schema: { querystring: StreamQuery, hide: true },
        // Refused before the upgrade: a typo must not look like a quiet board.
        preValidation: async (req) => {
          // This hook runs before the schema: a parameter given twice is an array here.
          const repeated = Object.entries(req.query as Record<string, unknown>).find(([, v]) =>
            Array.isArray(v),
          );
          if (repeated)
            throw new AppError('VALIDATION_FAILED', `${repeated[0]}: given more than once`);
          const { task, kinds, after } = req.query;
          if (after !== undefined) await board.checkAfter(after);
          const unknown = (kinds ?? '').split(',').filter((k) => k && !isEventKind(k));
          if (unknown.length > 0)
            throw new AppError(
              'VALIDATION_FAILED',
              `kinds: unknown event kind ${unknown.map((k) => `"${k}"`).join(', ')} (known: ${ALL_EVENT_KINDS.join(', ')})`,
            );
          if (task !== undefined && (await board.tasks.get(task)) === null)
            throw new AppError('VALIDATION_FAILED', `task: no task ${task}`);
          // Without an after, the stream starts at the newest event, read before the upgrade:
          // the handler then attaches at once, and what commits meanwhile comes in the backlog.
          starts.set(req, after ?? (await board.events.lastId()));
        },
      },
      (socket, req) => {
        const { task, kinds } = req.query;
        hub.attach(socket, {
          after: starts.get(req)!,
          task: task ?? null,
          kinds: kinds ? new Set<string>(kinds.split(',')) : null,
        });
      },
    );
  });
}
