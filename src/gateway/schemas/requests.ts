// Request schemas shared by the routes: the same ones validate requests and describe the API.
import { closed as strict, Type } from '../../schema-types.js';
import { AttemptsBody } from '../routes/attempts-request.js';
import { TITLE_MAX, TITLE_VISIBLE } from '../../kanban/model/task-title.js';
import { TASK_STATUSES } from '../../kanban/model/types.js';

export const TaskIdParams = Type.Object({ id: Type.String({ maxLength: 64 }) }, strict);
export const RunIdParams = Type.Object({ runId: Type.String({ maxLength: 64 }) }, strict);

// The one title rule (model/task-title.ts): ajv counts maxLength in code points.
const title = Type.String({ minLength: 1, maxLength: TITLE_MAX, pattern: TITLE_VISIBLE });
const body = Type.String({ maxLength: 100_000 });
const assignee = Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()]);
const priority = Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 });
const maxRuntimeSeconds = Type.Union([
  Type.Number({ exclusiveMinimum: 0, maximum: 31_536_000 }),
  Type.Null(),
]);
const maxRetries = Type.Union([Type.Integer({ minimum: 1, maximum: 1000 }), Type.Null()]);

/** A task's budget as a request gives it (docs/budgets.md): the figures to hold it to. */
export const BudgetBody = Type.Object(
  {
    usd: Type.Optional(
      Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 1e6 }), Type.Null()], {
        description: 'dollars; a kind that prints no cost (codex) takes none',
      }),
    ),
    tokens: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: 1e12 }), Type.Null()], {
        description: 'input + output tokens',
      }),
    ),
    runs: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1e6 }), Type.Null()])),
  },
  { ...strict, minProperties: 1 },
);

export const CreateTaskBody = Type.Object(
  {
    title,
    body: Type.Optional(body),
    assignee: Type.Optional(assignee),
    priority: Type.Optional(priority),
    parents: Type.Optional(
      Type.Array(Type.String({ pattern: '^t_[0-9a-f]{12}$' }), { maxItems: 100 }),
    ),
    maxRuntimeSeconds: Type.Optional(maxRuntimeSeconds),
    maxRetries: Type.Optional(maxRetries),
    repo: Type.Optional(
      Type.Union([Type.String({ pattern: '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$' }), Type.Null()], {
        description: 'the repository its worktree is made from: a name in workspaces.repos',
      }),
    ),
    review: Type.Optional(
      Type.Union([Type.Boolean(), Type.Null()], {
        description: 'its completed runs wait in review for a person; null: as its profile says',
      }),
    ),
    budget: Type.Optional(BudgetBody),
    /** Given to several attempts as it is made (docs/attempts.md): it never runs itself. */
    attempts: Type.Optional(AttemptsBody),
    approval: Type.Optional(
      Type.Union([Type.Literal('before_run'), Type.Null()], {
        description:
          'before_run: its first run waits in todo for a person’s approval (POST /tasks/:id/approve); null: as its profile says',
      }),
    ),
    model: Type.Optional(
      Type.Union(
        [Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\s]+$' }), Type.Null()],
        {
          description:
            'the model its agent profile runs it with: agent.model or one of agent.models',
        },
      ),
    ),
  },
  strict,
);

export const PatchTaskBody = Type.Object(
  {
    title: Type.Optional(title),
    body: Type.Optional(body),
    assignee: Type.Optional(assignee),
    priority: Type.Optional(priority),
    maxRuntimeSeconds: Type.Optional(maxRuntimeSeconds),
    maxRetries: Type.Optional(maxRetries),
  },
  { ...strict, minProperties: 1 },
);

/** A search: a task id, or text found anywhere in titles (ASCII letters in any case). */
const search = Type.String({ minLength: 1, maxLength: 200 });

export const ListTasksQuery = Type.Object(
  {
    status: Type.Optional(Type.Union(TASK_STATUSES.map((s) => Type.Literal(s)))),
    assignee: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    cursor: Type.Optional(Type.String({ maxLength: 100 })),
    order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
    q: Type.Optional(search),
  },
  strict,
);

export const CountTasksQuery = Type.Object(
  {
    assignee: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    q: Type.Optional(search),
  },
  strict,
);

export const ThroughputQuery = Type.Object(
  { window: Type.Union([Type.Literal('hour'), Type.Literal('day')]) },
  strict,
);

export const ReclaimBody = Type.Union([
  Type.Object({ force: Type.Optional(Type.Boolean()) }, strict),
  Type.Null(),
]);

export const CommentBody = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: 20_000 }),
    author: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  strict,
);

/** A text for a task's next run, and who wrote it (a follow-up, a change request). */
const runText = (description: string) =>
  Type.Object(
    {
      text: Type.String({ minLength: 1, maxLength: 100_000, description }),
      author: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    },
    strict,
  );

export const FollowUpBody = runText('the next run’s instructions');

export const ApproveBody = Type.Union([
  Type.Object(
    {
      by: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      revision: Type.Optional(
        Type.Integer({
          minimum: 1,
          description:
            'for a task waiting for approval: the revision you saw (an edit since then is refused with 409)',
        }),
      ),
    },
    strict,
  ),
  Type.Null(),
]);

export const AnswerBody = runText(
  'the answer to its agent’s question: the next run’s instructions',
);

export const ChangesBody = runText('what to change: the next run’s instructions, and a comment');

/** POST /tasks/:id/pr: {} opens (or adopts) the task's PR now; {url} binds an existing one. */
export const PullRequestBody = Type.Union([
  Type.Object(
    { url: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, pattern: '^https?://' })) },
    strict,
  ),
  Type.Null(),
]);

/** A repository's name in workspaces.repos. */
export const RepoParams = Type.Object({ repo: Type.String({ maxLength: 64 }) }, strict);

export const CompleteBody = Type.Union([
  Type.Object(
    {
      summary: Type.Optional(Type.String({ maxLength: 20_000 })),
      result: Type.Optional(Type.Unknown()),
    },
    strict,
  ),
  Type.Null(),
]);
export const BlockBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: 5000 }) },
  strict,
);
export const HeartbeatBody = Type.Union([
  Type.Object({ note: Type.Optional(Type.String({ maxLength: 2000 })) }, strict),
  Type.Null(),
]);

export const EventsQuery = Type.Object(
  {
    after: Type.Optional(Type.Integer({ minimum: 0 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  },
  strict,
);

export const StreamQuery = Type.Object(
  {
    after: Type.Optional(Type.Integer({ minimum: 0 })),
    task: Type.Optional(Type.String({ maxLength: 64 })),
    kinds: Type.Optional(Type.String({ maxLength: 1000, pattern: '^[a-z_]+(,[a-z_]+)*$' })),
    token: Type.Optional(Type.String({ maxLength: 500 })),
  },
  strict,
);

export const LogQuery = Type.Object(
  {
    tail: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    file: Type.Optional(
      Type.Union([Type.Literal('log'), Type.Literal('agent')], {
        description:
          '`log` (stdout and stderr; an agent run’s stderr), or `agent`: an agent run’s stdout, its JSON lines',
      }),
    ),
  },
  strict,
);
