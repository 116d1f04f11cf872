// Best of N (docs/attempts.md): a task given to several attempts, the attempts side by side, and
// the one a person keeps.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors.js';
import type { Attempts } from '../../kanban/attempts/attempts.js';
import { spentByRuns } from '../../kanban/model/budget.js';
import { startAttempts } from '../../kanban/moves/attempts.js';
import { Type, type Static } from '../../schema-types.js';
import { Task } from '../schemas/entities.js';
import { describe } from '../schemas/describe.js';
import { closed, nullable } from '../schemas/parts.js';
import { TaskIdParams } from '../schemas/requests.js';
import { originOf } from './route-checks.js';
import { AttemptsBody, attemptsRequest } from './attempts-request.js';
import type { TaskRouteDeps } from './task-routes.js';

const AttemptParams = Type.Object(
  { id: Type.String({ maxLength: 64 }), attemptId: Type.String({ maxLength: 64 }) },
  closed,
);

const AttemptView = Type.Object(
  {
    id: Type.String(),
    assignee: nullable(Type.String()),
    model: nullable(Type.String()),
    status: Type.String(),
    summary: nullable(Type.String()),
    evidence: nullable(
      Type.Object(
        { filesChanged: Type.Integer(), insertions: Type.Integer(), deletions: Type.Integer() },
        closed,
      ),
    ),
    judge: nullable(
      Type.Object({ exitCode: nullable(Type.Integer()), output: Type.String() }, closed),
    ),
    tokens: Type.Integer(),
    costUsd: Type.Number(),
  },
  closed,
);

export function attemptRoutes(
  app: FastifyInstance,
  deps: Pick<TaskRouteDeps, 'board' | 'profiles' | 'modelProblem' | 'repoProblem'> & {
    attempts: Attempts;
  },
): void {
  const { board } = deps;
  app.post<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof AttemptsBody> }>(
    '/tasks/:id/attempts',
    {
      schema: {
        params: TaskIdParams,
        body: AttemptsBody,
        ...describe({
          tag: 'tasks',
          id: 'startAttempts',
          summary: 'Try a task with several attempts side by side',
          description:
            'A task in `todo` or `ready` waits in `todo` (`awaiting: "attempts"`) while N new tasks (`attemptOf` it) run at once, each with its own worktree, profile and model. Once all ended, `judge.command` runs in each one’s worktree, the task goes to `review`; with `autoPick: "judge"` the best judged attempt is picked. 409 for a task in another status or with attempts already.',
          ok: { 201: Type.Object({ task: Task, attempts: Type.Array(Task) }, closed) },
          errors: [404, 409],
        }),
      },
    },
    async (req, reply) => {
      const task = await board.tasks.get(req.params.id);
      if (!task) throw new AppError('TASK_NOT_FOUND', `no task ${req.params.id}`);
      const request = await attemptsRequest(req.body, task, deps);
      const made = await board.transact((tx) => startAttempts(tx, task.id, request, originOf(req)));
      return reply.code(201).send(made);
    },
  );

  app.get<{ Params: Static<typeof TaskIdParams> }>(
    '/tasks/:id/attempts',
    {
      schema: {
        params: TaskIdParams,
        ...describe({
          tag: 'tasks',
          id: 'listAttempts',
          summary: 'A task’s attempts side by side',
          description:
            'Each attempt’s status, summary, what its last run changed in its worktree, the judge’s result, and its tokens and cost. Its diff: GET /tasks/:attemptId/diff. 404 for a task without attempts.',
          ok: { 200: Type.Object({ attempts: Type.Array(AttemptView) }, closed) },
          errors: [404],
        }),
      },
    },
    async (req) => {
      const task = await board.tasks.get(req.params.id);
      if (!task?.attempts)
        throw new AppError('TASK_NOT_FOUND', `no task ${req.params.id} with attempts`);
      const out = [];
      for (const c of await deps.attempts.candidates(task.attempts.ids)) {
        const t = (await board.tasks.get(c.id))!;
        const spent = spentByRuns(await board.runs.forTask(c.id));
        out.push({
          id: c.id,
          assignee: t.assignee,
          model: t.model,
          status: t.status,
          summary: t.summary,
          evidence: c.evidence
            ? {
                filesChanged: c.evidence.filesChanged,
                insertions: c.evidence.insertions,
                deletions: c.evidence.deletions,
              }
            : null,
          judge: t.judge ? { exitCode: t.judge.exitCode, output: t.judge.output } : null,
          tokens: spent.tokens,
          costUsd: spent.usd,
        });
      }
      return { attempts: out };
    },
  );

  app.post<{ Params: Static<typeof AttemptParams> }>(
    '/tasks/:id/attempts/:attemptId/pick',
    {
      schema: {
        params: AttemptParams,
        ...describe({
          tag: 'tasks',
          id: 'pickAttempt',
          summary: 'Keep one attempt',
          description:
            'Its worktree’s whole state is kept on the branch `gatehouse/<id>` (`attempts.branch`), the task is `done` (`attempt_picked`), or in a repository with pull requests stays in `review` on a worktree of that branch while its pull request is opened, and the other attempts are archived, their work preserved. 409 before all attempts ended or after a pick; 400 for a task that is not one of its attempts.',
          ok: { 200: Task },
          errors: [404, 409],
        }),
      },
    },
    (req) => deps.attempts.pick(req.params.id, req.params.attemptId, 'api'),
  );
}
