// A task's agent usage: the sum of its runs' (docs/agents.md), each figure null where no run had it.
import type { AgentUsage } from './types.js';

const FIGURES = ['inputTokens', 'outputTokens', 'cachedTokens', 'costUsd', 'numTurns'] as const;

export function totalUsage(usages: readonly (AgentUsage | null | undefined)[]): AgentUsage | null {
  const known = usages.filter((u): u is AgentUsage => u != null);
  if (known.length === 0) return null;
  const total = {} as AgentUsage;
  for (const key of FIGURES) {
    const values = known.map((u) => u[key]).filter((v): v is number => v !== null);
    total[key] = values.length === 0 ? null : values.reduce((a, b) => a + b, 0);
  }
  return total;
}
