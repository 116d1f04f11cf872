import { describe, expect, it } from 'vitest';
import { decideOutcome } from '../../src/kanban/model/outcome-policy.js';

const ctx = { failures: 0, limit: 2, exitCode: null, now: 1000, rateLimitCooldownMs: 300_000 };

describe('decideOutcome', () => {
  it('completes and resets the failure count', () => {
    expect(decideOutcome('completed', { ...ctx, failures: 1 })).toMatchObject({
      move: 'complete',
      failures: 0,
      gaveUp: false,
    });
  });

  it('blocks at once, with gave_up, on a protocol violation', () => {
    expect(decideOutcome('protocol_violation', ctx)).toMatchObject({
      move: 'give_up',
      failures: 1,
      gaveUp: true,
    });
  });

  it('releases a rate-limited run with a cooldown and counts nothing', () => {
    expect(decideOutcome('rate_limited', ctx)).toMatchObject({
      move: 'release',
      failures: 0,
      counted: false,
      notBefore: 301_000,
    });
  });

  it('gives up at once on exit 78', () => {
    expect(decideOutcome('crashed', { ...ctx, exitCode: 78 })).toMatchObject({
      move: 'give_up',
      gaveUp: true,
    });
  });

  it('retries a crash below the limit and gives up at it', () => {
    expect(decideOutcome('crashed', { ...ctx, exitCode: 1 })).toMatchObject({
      move: 'release',
      failures: 1,
      gaveUp: false,
    });
    expect(decideOutcome('crashed', { ...ctx, exitCode: 1, failures: 1 })).toMatchObject({
      move: 'give_up',
      failures: 2,
      gaveUp: true,
    });
  });

  it.each(['timed_out', 'stale', 'spawn_failed'] as const)('counts %s as a failure', (outcome) => {
    expect(decideOutcome(outcome, ctx)).toMatchObject({
      move: 'release',
      failures: 1,
      counted: true,
    });
  });

  it('resets the count on an operator reclaim', () => {
    expect(decideOutcome('reclaimed', { ...ctx, failures: 1 })).toMatchObject({
      move: 'release',
      failures: 0,
    });
  });
});
