// A task's budget and what it spent (docs/budgets.md): pure, so the claim, the live watch and the
// API judge spend the same way. Spend is a run's usage: its cost in dollars (at its end: the kinds
// print cost only there), its input and output tokens, and the run itself.
import type { AgentUsage } from '../../agents/types.js';

import type { Budget } from '../../config/schema.js';

export type { Budget, DailyBudget } from '../../config/schema.js';

export interface Spent {
  usd: number;
  tokens: number;
  runs: number;
}

/** The share of a budget at which a warning is given. */
export const WARN_AT = 0.8;

/** A budget with every figure said (null: none). */
export function fullBudget(b: Partial<Budget>): Budget {
  return { usd: b.usd ?? null, tokens: b.tokens ?? null, runs: b.runs ?? null };
}

/** A run's tokens: input and output (cached input is part of input, not counted twice). */
export function tokensOf(usage: AgentUsage | null | undefined): number {
  return (usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0);
}

/** What these runs spent, from the usage each recorded. */
export function spentByRuns(
  runs: readonly { agent?: { usage: AgentUsage | null } | null }[],
): Spent {
  return spentOf(runs.map((r) => r.agent?.usage));
}

/** What runs with these usages spent. */
export function spentOf(usages: readonly (AgentUsage | null | undefined)[]): Spent {
  let usd = 0;
  let tokens = 0;
  for (const u of usages) {
    usd += u?.costUsd ?? 0;
    tokens += tokensOf(u);
  }
  return { usd: Math.round(usd * 1e6) / 1e6, tokens, runs: usages.length };
}

const dollars = (n: number) => `$${n.toFixed(2)}`;

/** Each figure of `budget` with its limit and what is spent of it, in words. */
function figures(budget: Partial<Budget>, spent: Spent) {
  const out: { name: keyof Budget; limit: number; used: number; words: string }[] = [];
  if (budget.usd != null)
    out.push({
      name: 'usd',
      limit: budget.usd,
      used: spent.usd,
      words: `${dollars(spent.usd)} of ${dollars(budget.usd)}`,
    });
  if (budget.tokens != null)
    out.push({
      name: 'tokens',
      limit: budget.tokens,
      used: spent.tokens,
      words: `${spent.tokens} of ${budget.tokens} tokens`,
    });
  if (budget.runs != null)
    out.push({
      name: 'runs',
      limit: budget.runs,
      used: spent.runs,
      words: `${spent.runs} of ${budget.runs} runs`,
    });
  return out;
}

/** Why nothing more may be spent (`budget reached ($5.00 of $5.00)`), or null: there is room. */
export function budgetReached(budget: Partial<Budget> | null, spent: Spent): string | null {
  const over = budget ? figures(budget, spent).find((f) => f.used >= f.limit) : undefined;
  return over ? `budget reached (${over.words})` : null;
}

/** The figures at or past WARN_AT of their limit but not at it, in words (empty: none). */
export function budgetNearing(budget: Partial<Budget> | null, spent: Spent): string[] {
  if (!budget) return [];
  return figures(budget, spent)
    .filter((f) => f.used >= f.limit * WARN_AT && f.used < f.limit)
    .map((f) => f.words);
}

/** The start of the UTC day `at` is in, and of the next. */
export function utcDay(at: number): { start: number; next: number } {
  const start = Math.floor(at / 86_400_000) * 86_400_000;
  return { start, next: start + 86_400_000 };
}

/** The dollars left of the task's budget for its next run, or null: no dollar budget. */
export function usdLeft(budget: Partial<Budget> | null, spent: Spent): number | null {
  return budget?.usd == null ? null : Math.max(0, budget.usd - spent.usd);
}
