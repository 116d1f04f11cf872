// What a request for best of N asks (docs/attempts.md), on POST /tasks/:id/attempts or as
// `attempts` on POST /tasks: its schema, and its variants checked as a new task's would be.
import { AppError } from '../../errors.js';
import type { AttemptsRequest, AttemptVariant } from '../../kanban/moves/attempts.js';
import { Type, type Static } from '../../schema-types.js';
import { checkAssignee } from './route-checks.js';
import { closed } from '../schemas/parts.js';

const MAX_ATTEMPTS = 10;

/** Why a task with this assignee may not ask for this repo or model, or null (task-routes.ts). */
export interface VariantChecks {
  profiles: () => Promise<readonly string[]>;
  repoProblem: (repo: string, assignee: string | null) => string | null;
  modelProblem: (model: string, assignee: string | null) => string | null;
}

export const AttemptsBody = Type.Object(
  {
    variants: Type.Optional(
      Type.Array(
        Type.Object(
          {
            assignee: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
            model: Type.Optional(
              Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\s]+$' }),
            ),
          },
          closed,
        ),
        { minItems: 1, maxItems: MAX_ATTEMPTS },
      ),
    ),
    n: Type.Optional(
      Type.Integer({
        minimum: 2,
        maximum: MAX_ATTEMPTS,
        description: 'how many attempts; default: one per variant (the variants taken in turn)',
      }),
    ),
    judge: Type.Optional(
      Type.Object(
        {
          command: Type.Array(Type.String({ minLength: 1 }), {
            minItems: 1,
            maxItems: 100,
            description: 'argv run in each attempt’s worktree once all ended, in its sandbox',
          }),
        },
        closed,
      ),
    ),
    autoPick: Type.Optional(Type.Literal('judge')),
  },
  { ...closed, minProperties: 1 },
);

/** The attempts a request asks for, each variant checked as a new task's assignee and model are. */
export async function attemptsRequest(
  body: Static<typeof AttemptsBody>,
  task: { assignee: string | null; repo: string | null },
  deps: VariantChecks,
): Promise<AttemptsRequest> {
  const given: AttemptVariant[] = (body.variants ?? [{}]).map((v) => ({
    assignee: v.assignee ?? null,
    model: v.model ?? null,
  }));
  const n = body.n ?? (body.variants ? given.length : 2);
  if (n < 2)
    throw new AppError('VALIDATION_FAILED', 'attempts: at least 2 (give 2 variants, or n)');
  const variants = Array.from({ length: n }, (_, i) => given[i % given.length]!);
  for (const v of variants) {
    const assignee = v.assignee ?? task.assignee;
    await checkAssignee(deps.profiles, assignee);
    const model = v.model ? deps.modelProblem(v.model, assignee) : null;
    if (model) throw new AppError('VALIDATION_FAILED', `attempts: model: ${model}`);
    const repo = task.repo ? deps.repoProblem(task.repo, assignee) : null;
    if (repo) throw new AppError('VALIDATION_FAILED', `attempts: repo: ${repo}`);
  }
  return { variants, judge: body.judge ?? null, autoPick: body.autoPick ?? null };
}
