// /tasks/:id/…: an operator's moves of a task (archive, reclaim, unblock, follow up, approve,
// answer, request changes) and comments on it.
import type { Static } from '../../schema-types.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { awaitsApproval } from '../../kanban/model/asks.js';
import type { TaskRouteDeps } from './task-routes.js';
import { IdempotencyHeaders, KEYED_ERRORS, keyedRequest, sendAnswer } from './idempotency.js';
import {
  AnswerBody,
  ApproveBody,
  ChangesBody,
  CommentBody,
  FollowUpBody,
  ReclaimBody,
  TaskIdParams,
} from '../schemas/requests.js';
import { Comment, Task } from '../schemas/entities.js';
import { describe } from '../schemas/describe.js';

type IdRequest = FastifyRequest<{ Params: Static<typeof TaskIdParams> }>;

export function taskActionRoutes(
  app: FastifyInstance,
  deps: Pick<TaskRouteDeps, 'board' | 'operator' | 'idempotencyMs' | 'approvals'>,
): void {
  const { board, operator } = deps;
  const params = TaskIdParams;

  app.post(
    '/tasks/:id/archive',
    {
      schema: {
        params,
        ...describe({
          tag: 'tasks',
          id: 'archiveTask',
          summary: 'Archive a task, terminating its worker first',
          description:
            'A running task’s worker and its children are ended first (on another host, by that host, and the answer waits for it). 409 when a worker survived SIGKILL.',
          ok: { 200: Task },
          errors: [404, 409],
        }),
      },
    },
    (req: IdRequest) => operator.archive(req.params.id),
  );

  app.post<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof ReclaimBody> }>(
    '/tasks/:id/reclaim',
    {
      schema: {
        params,
        body: ReclaimBody,
        ...describe({
          tag: 'tasks',
          id: 'reclaimTask',
          summary: 'Release a running task to ready',
          description:
            'Ends the running worker and its children, then puts the task back to `ready`. 409 for a task that is not running (unless `force`).',
          ok: { 200: Task },
          errors: [404, 409],
        }),
      },
    },
    (req) => operator.reclaim(req.params.id, req.body?.force ?? false),
  );

  app.post(
    '/tasks/:id/unblock',
    {
      schema: {
        params,
        ...describe({
          tag: 'tasks',
          id: 'unblockTask',
          summary: 'Unblock a task',
          description:
            'A blocked task goes back to `ready` (or `todo` while a parent is not done), its failure count reset. 409 for a task that is not blocked.',
          ok: { 200: Task },
          errors: [404, 409],
        }),
      },
    },
    (req: IdRequest) => operator.unblock(req.params.id),
  );

  app.post<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof FollowUpBody> }>(
    '/tasks/:id/follow-up',
    {
      schema: {
        params,
        body: FollowUpBody,
        headers: IdempotencyHeaders,
        ...describe({
          tag: 'tasks',
          id: 'followUpTask',
          summary: 'Send a done, blocked or review task back with more to do',
          description:
            'The task goes back to `ready` (or `todo` while a parent is not done), its failure count reset, with `text` as its next run’s instructions (`instructions` on the task, in the run’s task.json and the file `$GATEHOUSE_INSTRUCTIONS_FILE`), in the same workspace; a `followed_up` event. 409 for a task that is not done, blocked or in review. With an `Idempotency-Key`, a retry gets the first answer and sends nothing back twice.',
          ok: { 200: Task },
          errors: [404, 409, ...KEYED_ERRORS],
        }),
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const author = req.body.author ?? 'operator';
      const key = keyedRequest(req, deps.idempotencyMs);
      if (key) return sendAnswer(reply, await board.followUpKeyed(id, req.body.text, author, key));
      return board.followUp(id, req.body.text, author);
    },
  );

  app.post<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof ApproveBody> }>(
    '/tasks/:id/approve',
    {
      schema: {
        params,
        body: ApproveBody,
        ...describe({
          tag: 'tasks',
          id: 'approveTask',
          summary: 'Approve a task in review, or a task’s first run',
          description:
            'A task whose completed run waits in `review` goes to `done`, its children promoted as by a completion; an `approved` event with `by` (default "operator"). A task whose first run waits for approval (`approval` on the task, docs/mcp.md) is approved at its current revision (or the `revision` given, refused with 409 if it was edited since) and goes to `ready` (or stays in `todo` for its parents); 403 when its profile’s `approvers` do not name `api`, or with `notSelf` for a task made through the API. 409 for a task that is neither.',
          ok: { 200: Task },
          errors: [403, 404, 409],
        }),
      },
    },
    async (req) => {
      const task = await board.get(req.params.id);
      if (!awaitsApproval(task.approval))
        return board.approve(req.params.id, req.body?.by ?? 'operator');
      const refusal = deps.approvals.refusal(task, 'api');
      if (refusal) throw new AppError('FORBIDDEN', refusal);
      return board.approveRun(req.params.id, req.body?.by ?? 'api', req.body?.revision ?? null);
    },
  );

  app.post<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof AnswerBody> }>(
    '/tasks/:id/answer',
    {
      schema: {
        params,
        body: AnswerBody,
        ...describe({
          tag: 'tasks',
          id: 'answerTask',
          summary: 'Answer the question a blocked task’s agent asked',
          description:
            'A task blocked on its agent’s question (`blockKind: "question"`, docs/mcp.md) goes back to `ready` (or `todo` while a parent is not done) with the answer as its next run’s instructions, resuming the agent’s session; an `answered` event. 409 for a task that waits for no answer.',
          ok: { 200: Task },
          errors: [404, 409],
        }),
      },
    },
    (req) => board.answer(req.params.id, req.body.text, req.body.author ?? 'operator'),
  );

  app.post<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof ChangesBody> }>(
    '/tasks/:id/request-changes',
    {
      schema: {
        params,
        body: ChangesBody,
        ...describe({
          tag: 'tasks',
          id: 'requestChanges',
          summary: 'Send a task in review back with what to change',
          description:
            'The task goes back to `ready` (or `todo` while a parent is not done) with `text` as its next run’s instructions and as a comment, in the same workspace, resuming an agent’s session; a `changes_requested` event. Not counted as a failure. 409 for a task that is not in review.',
          ok: { 200: Task },
          errors: [404, 409],
        }),
      },
    },
    (req) => board.requestChanges(req.params.id, req.body.text, req.body.author ?? 'operator'),
  );

  app.post<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof CommentBody> }>(
    '/tasks/:id/comments',
    {
      schema: {
        params,
        body: CommentBody,
        headers: IdempotencyHeaders,
        ...describe({
          tag: 'tasks',
          id: 'commentOnTask',
          summary: 'Comment on a task',
          description:
            'Adds a comment (author defaults to "operator"); it is in the task’s events as `commented`. With an `Idempotency-Key`, a retry gets the first answer and adds nothing.',
          ok: { 201: Comment },
          errors: [404, ...KEYED_ERRORS],
          replays: true,
        }),
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const author = req.body.author ?? 'operator';
      const key = keyedRequest(req, deps.idempotencyMs);
      if (key) return sendAnswer(reply, await board.commentKeyed(id, req.body.text, author, key));
      return reply.code(201).send(await board.comment(id, req.body.text, author));
    },
  );
}
