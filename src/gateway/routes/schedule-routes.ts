// Schedules (docs/schedules.md): each one's next and last firing, pause, resume and run now.
import type { FastifyInstance } from 'fastify';
import { SCHEDULE_NAME } from '../../config/schema.js';
import { AppError } from '../../errors.js';
import type { Scheduler } from '../../kanban/schedules/scheduler.js';
import { Type, type Static } from '../../schema-types.js';
import { Task } from '../schemas/entities.js';
import { describe } from '../schemas/describe.js';
import { closed, nullable } from '../schemas/parts.js';

const Params = Type.Object({ name: Type.String({ pattern: SCHEDULE_NAME }) }, closed);

const ScheduleSchema = Type.Object(
  {
    name: Type.String(),
    cron: Type.String(),
    timezone: Type.String(),
    overlap: Type.Union([Type.Literal('skip'), Type.Literal('queue')]),
    enabled: Type.Boolean({ description: 'as configured' }),
    paused: Type.Boolean({ description: 'paused on every host (POST /schedules/:name/pause)' }),
    nextFireTime: nullable(Type.String({ description: 'ISO 8601; null while disabled or paused' })),
    lastFireTime: nullable(Type.String({ description: 'its last firing, made or skipped' })),
    lastTaskId: nullable(Type.String({ description: 'the task its last made firing created' })),
  },
  closed,
);

const PauseAnswer = Type.Object(
  { schedule: Type.String(), changed: Type.Boolean({ description: 'false: it already was' }) },
  closed,
);

export function scheduleRoutes(app: FastifyInstance, scheduler: Scheduler): void {
  const known = (name: string) => {
    if (!scheduler.has(name))
      throw new AppError('SCHEDULE_NOT_FOUND', `no schedule named "${name}" in schedules`);
  };

  app.get(
    '/schedules',
    {
      schema: describe({
        tag: 'tasks',
        id: 'listSchedules',
        summary: 'List the schedules with their next and last firing',
        description: 'Every schedule in the configuration, in name order.',
        ok: { 200: Type.Object({ schedules: Type.Array(ScheduleSchema) }, closed) },
      }),
    },
    async () => ({ schedules: await scheduler.list() }),
  );

  for (const [action, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const)
    app.post<{ Params: Static<typeof Params> }>(
      `/schedules/:name/${action}`,
      {
        schema: {
          params: Params,
          ...describe({
            tag: 'tasks',
            id: `${action}Schedule`,
            summary: paused ? 'Pause a schedule on every host' : 'Resume a paused schedule',
            description: paused
              ? 'Its firings make nothing until it is resumed (each is recorded, so none is made later); `schedule_paused`.'
              : 'Its next firing makes its task again; the firings while it was paused are not made. `schedule_resumed`.',
            ok: { 200: PauseAnswer },
            errors: [404],
          }),
        },
      },
      async (req) => {
        known(req.params.name);
        return {
          schedule: req.params.name,
          changed: await scheduler.setPaused(req.params.name, paused, 'api'),
        };
      },
    );

  app.post<{ Params: Static<typeof Params> }>(
    '/schedules/:name/run',
    {
      schema: {
        params: Params,
        ...describe({
          tag: 'tasks',
          id: 'runSchedule',
          summary: 'Make a schedule’s task now',
          description:
            'Whatever its calendar, pause or overlap say: the task, with `schedule.fireTime` now. Its next firing still comes at its time.',
          ok: { 201: Task },
          errors: [404],
        }),
      },
    },
    async (req, reply) => {
      known(req.params.name);
      return reply.code(201).send(await scheduler.runNow(req.params.name));
    },
  );
}
