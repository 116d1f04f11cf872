// One function turns a run's outcome into the task's next move and its failure count (docs/workers.md).
import type { TaskMove } from './transitions.js';
import type { RunOutcome } from './types.js';

export interface OutcomeContext {
  /** consecutiveFailures before this run ended. */
  failures: number;
  /** The task's maxRetries, else workers.failureLimit. */
  limit: number;
  exitCode: number | null;
  now: number;
  rateLimitCooldownMs: number;
}

export interface OutcomeDecision {
  move: TaskMove;
  failures: number;
  /** The failure breaker tripped: a gave_up event goes with the move. */
  gaveUp: boolean;
  /** Counted as a failure (recorded as lastFailureError). */
  counted: boolean;
  notBefore: number | null;
}

/** Exit code 78 (EX_CONFIG) means retrying cannot help. */
export const EXIT_CONFIG = 78;

export function decideOutcome(outcome: RunOutcome, ctx: OutcomeContext): OutcomeDecision {
  const keep = { failures: ctx.failures, gaveUp: false, counted: false, notBefore: null };
  const fail = (limit: number): OutcomeDecision => {
    const failures = ctx.failures + 1;
    const gaveUp = failures >= limit;
    return {
      move: gaveUp ? 'give_up' : 'release',
      failures,
      gaveUp,
      counted: true,
      notBefore: null,
    };
  };
  switch (outcome) {
    case 'completed':
      return { ...keep, move: 'complete', failures: 0 };
    case 'blocked':
    case 'budget_exceeded':
      return { ...keep, move: 'block' };
    case 'reclaimed':
      return { ...keep, move: 'release', failures: 0 };
    case 'archived':
      return { ...keep, move: 'archive' };
    case 'interrupted':
      return { ...keep, move: 'release' };
    case 'rate_limited':
      return { ...keep, move: 'release', notBefore: ctx.now + ctx.rateLimitCooldownMs };
    case 'protocol_violation':
      return fail(1);
    case 'crashed':
      return fail(ctx.exitCode === EXIT_CONFIG ? 1 : ctx.limit);
    case 'timed_out':
    case 'stale':
    case 'lost':
    case 'spawn_failed':
      return fail(ctx.limit);
  }
}
