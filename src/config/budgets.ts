// A profile's `budget` and `dailyBudget`, resolved (docs/budgets.md). A figure its runs never
// report cannot be held to: a dollar budget on a kind that prints no cost (codex), or a dollar or
// token budget on a command's profile, is refused by its key.
import type { AgentConfig, Budget, DailyBudget, RawConfig } from './schema.js';

type Fail = (key: string, message: string) => Error;
type RawProfile = RawConfig['workers']['profiles'][string];

/** Kinds whose runs print their cost. */
const PRINTS_COST: ReadonlySet<AgentConfig['kind']> = new Set(['claude']);

export function resolveBudgets(
  raw: RawProfile,
  agent: AgentConfig | null,
  at: string,
  fail: Fail,
): { budget: Budget | null; dailyBudget: DailyBudget | null } {
  const budget = raw.budget
    ? {
        usd: raw.budget.usd ?? null,
        tokens: raw.budget.tokens ?? null,
        runs: raw.budget.runs ?? null,
      }
    : null;
  const dailyBudget = raw.dailyBudget
    ? { usd: raw.dailyBudget.usd ?? null, tokens: raw.dailyBudget.tokens ?? null }
    : null;
  for (const [key, b] of [
    ['budget', budget],
    ['dailyBudget', dailyBudget],
  ] as const) {
    if (!b) continue;
    if (b.usd !== null && !(agent && PRINTS_COST.has(agent.kind)))
      throw fail(
        `${at}.${key}.usd`,
        agent
          ? `${agent.kind} prints no cost: only tokens and runs budgets apply to it`
          : "a command's runs report no cost: only a runs budget applies to it",
      );
    if (b.tokens !== null && !agent)
      throw fail(
        `${at}.${key}.tokens`,
        "a command's runs report no tokens: only a runs budget applies to it",
      );
  }
  return { budget, dailyBudget };
}

/** Why a task with this assignee may not have `budget`, or null (a figure its runs never report). */
export function budgetProblem(
  config: {
    workers: { defaultProfile: string; profiles: Record<string, { agent: AgentConfig | null }> };
  },
  budget: Partial<Budget>,
  assignee: string | null,
): string | null {
  const name = assignee ?? config.workers.defaultProfile;
  const profile = config.workers.profiles[name];
  // An assignee this host does not run is checked by the host that does.
  if (!profile) return null;
  const agent = profile.agent;
  if (budget.usd != null && !(agent && PRINTS_COST.has(agent.kind)))
    return agent
      ? `profile "${name}" runs ${agent.kind}, which prints no cost: only tokens and runs budgets apply`
      : `profile "${name}" runs a command, which reports no cost: only a runs budget applies`;
  if (budget.tokens != null && !agent)
    return `profile "${name}" runs a command, which reports no tokens: only a runs budget applies`;
  return null;
}
