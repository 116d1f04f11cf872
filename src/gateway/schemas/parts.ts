// Small pieces every API schema file builds with: one definition each.
import { closed, Type, type TSchema } from '../../schema-types.js';

/** The routes' schemas name it here, with the other parts. */
export { closed };

/** An object with exactly the properties given. */

/** The schema, or null. */
export const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A task's budget (docs/budgets.md): each figure's ceiling, null: none. */
export const BudgetFields = Type.Object(
  {
    usd: nullable(Type.Number({ description: 'dollars' })),
    tokens: nullable(Type.Integer({ description: 'input + output tokens' })),
    runs: nullable(Type.Integer()),
  },
  closed,
);

/** What a task's runs spent, as its budget counts it. */
export const SpentFields = Type.Object(
  { usd: Type.Number(), tokens: Type.Integer(), runs: Type.Integer() },
  closed,
);
