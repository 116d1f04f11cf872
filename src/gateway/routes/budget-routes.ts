// A task's budget raised by a person (docs/budgets.md): a task its budget blocked runs again.
import type { FastifyInstance } from 'fastify';
import type { Board } from '../../kanban/board.js';
import { raiseBudget } from '../../kanban/moves/budget.js';
import { AppError } from '../../errors.js';
import { type Static } from '../../schema-types.js';
import { Task } from '../schemas/entities.js';
import { describe } from '../schemas/describe.js';
import { BudgetBody, TaskIdParams } from '../schemas/requests.js';
import type { TaskRouteDeps } from './task-routes.js';

export function budgetRoutes(
  app: FastifyInstance,
  deps: Pick<TaskRouteDeps, 'budgetProblem' | 'profileBudget'> & { board: Board },
): void {
  app.post<{ Params: Static<typeof TaskIdParams>; Body: Static<typeof BudgetBody> }>(
    '/tasks/:id/budget',
    {
      schema: {
        params: TaskIdParams,
        body: BudgetBody,
        ...describe({
          tag: 'tasks',
          id: 'raiseTaskBudget',
          summary: 'Raise (or set) a task’s budget',
          description:
            'The figures given replace those of its budget (its own, else its profile’s, which it then has as its own); null takes one away. A task blocked by its budget (`blockKind: "budget"`) goes back to `ready`; one whose new budget is spent already is a 400 and nothing changes. `budget_raised`, then `unblocked`.',
          ok: { 200: Task },
          errors: [404, 409],
        }),
      },
    },
    async (req) => {
      const task = await deps.board.tasks.get(req.params.id);
      if (!task) throw new AppError('TASK_NOT_FOUND', `no task ${req.params.id}`);
      const problem = deps.budgetProblem(req.body, task.assignee);
      if (problem) throw new AppError('VALIDATION_FAILED', `budget: ${problem}`);
      return deps.board.transact((tx) =>
        raiseBudget(tx, req.params.id, req.body, deps.profileBudget(task.assignee), 'api'),
      );
    },
  );
}
