// A task's pull request (docs/pull-requests.md): opened or bound now, synced now, and the forges'
// signed webhooks, which need no token (their signature is their authentication).
import type { FastifyInstance } from 'fastify';
import type { PullRequests } from '../../pulls/pull-requests.js';
import { Type, type Static } from '../../schema-types.js';
import { Task } from '../schemas/entities.js';
import { describe } from '../schemas/describe.js';
import { PullRequestBody, RepoParams, TaskIdParams } from '../schemas/requests.js';

const DeliveryAnswer = Type.Object(
  {
    ok: Type.Boolean(),
    duplicate: Type.Boolean({ description: 'the same delivery id was received before' }),
    tasks: Type.Array(Type.String(), { description: 'the tasks whose PRs it syncs' }),
  },
  { additionalProperties: false },
);

export function prRoutes(app: FastifyInstance, pulls: PullRequests): void {
  app.post<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof PullRequestBody> }>(
    '/tasks/:id/pr',
    {
      schema: {
        params: TaskIdParams,
        body: PullRequestBody,
        ...describe({
          tag: 'tasks',
          id: 'openPullRequest',
          summary: "Open the task's pull request now, or bind an existing one",
          description:
            'With `{}`: for a task in review or done whose branch has changes, what its last run left is committed, its branch pushed and its PR adopted or opened. With `{url}`: an existing PR of the task’s branch is bound to it (409 `PR_NOT_OF_TASK` when it is of another branch or project). 409 `NO_PULL_REQUESTS` for a task without a worktree in a repository with `pr`; 503 `FORGE_UNAVAILABLE` when the forge cannot be asked.',
          ok: { 200: Task },
          errors: [404, 409, 503],
        }),
      },
    },
    (req) =>
      req.body?.url ? pulls.bind(req.params.id, req.body.url) : pulls.openNow(req.params.id),
  );

  app.post<{ Params: Static<typeof TaskIdParams> }>(
    '/tasks/:id/pr/sync',
    {
      schema: {
        params: TaskIdParams,
        ...describe({
          tag: 'tasks',
          id: 'syncPullRequest',
          summary: "Read the task's pull request from the forge now",
          description:
            'The PR, its checks and its feedback are read at once and the task moved as they say (merged: done; closed: blocked; failing checks or review feedback: a follow-up). 409 for a task without a PR; 503 `FORGE_UNAVAILABLE` when the forge cannot be asked.',
          ok: { 200: Task },
          errors: [404, 409, 503],
        }),
      },
    },
    (req) => pulls.syncNow(req.params.id),
  );

  // The signature covers the raw body: this scope keeps it as it came.
  app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) =>
      done(null, body),
    );
    scope.post<{ Params: Static<typeof RepoParams>; Body: Buffer }>(
      '/forges/:repo/webhook',
      {
        config: { auth: 'none' },
        schema: {
          params: RepoParams,
          ...describe({
            tag: 'tasks',
            id: 'receiveForgeWebhook',
            summary: "A forge's webhook delivery for a repository's pull requests",
            description:
              'Needs no token: GitHub and Gitea deliveries are verified by `X-Hub-Signature-256` (Gitea also `X-Gitea-Signature`), GitLab by `X-Gitlab-Token`, with the secret of the repository’s `pr.webhookSecretEnv`. A delivery only triggers a sync (the forge’s API is the truth); one received before (same delivery id, 24 hours) changes nothing. What gatehouse does not use is still 2xx.',
            ok: { 200: DeliveryAnswer, 202: DeliveryAnswer },
            errors: [{ status: 401, reason: 'a missing or wrong signature' }, 404],
            public: true,
          }),
        },
      },
      async (req, reply) => {
        const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const answer = await pulls.webhook(req.params.repo, req.headers, raw);
        return reply.code(answer.status).send(answer.body);
      },
    );
  });
}
