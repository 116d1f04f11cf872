// The pure rules of budgets (docs/budgets.md) and best of N (docs/attempts.md): what a budget
// says of what was spent, and which judged attempt is the best.
import { describe, expect, it } from 'vitest';
import { bestAttempt, type Candidate } from '../../src/kanban/model/attempts.js';
import {
  budgetNearing,
  budgetReached,
  spentOf,
  usdLeft,
  utcDay,
} from '../../src/kanban/model/budget.js';

const usage = (input: number, output: number, cost: number | null) => ({
  inputTokens: input,
  outputTokens: output,
  cachedTokens: 999,
  costUsd: cost,
  numTurns: 1,
});

describe('a budget', () => {
  it('counts input and output tokens, dollars and runs (a run with no usage is still a run)', () => {
    expect(spentOf([usage(100, 20, 0.5), null, usage(10, 5, null)])).toEqual({
      usd: 0.5,
      tokens: 135,
      runs: 3,
    });
  });

  it('is reached at its figure, names it, and warns from 80 % below it', () => {
    const spent = { usd: 5, tokens: 800, runs: 1 };
    expect(budgetReached({ usd: 5 }, spent)).toBe('budget reached ($5.00 of $5.00)');
    expect(budgetReached({ usd: 6, tokens: 1000 }, spent)).toBeNull();
    expect(budgetNearing({ usd: 6, tokens: 1000 }, spent)).toEqual([
      '$5.00 of $6.00',
      '800 of 1000 tokens',
    ]);
    expect(budgetNearing({ runs: 2 }, spent)).toEqual([]);
    expect(usdLeft({ usd: 6 }, spent)).toBe(1);
    expect(usdLeft({ tokens: 9 }, spent)).toBeNull();
  });

  it('counts a day from 00:00 UTC', () => {
    expect(utcDay(Date.parse('2026-12-06T23:59:59Z'))).toEqual({
      start: Date.parse('2026-12-06T00:00:00Z'),
      next: Date.parse('2026-12-07T00:00:00Z'),
    });
  });
});

describe('the best attempt', () => {
  const attempt = (
    id: string,
    exitCode: number | null,
    lines: number,
    status = 'done',
  ): Candidate => ({
    id,
    status: status as Candidate['status'],
    judge: exitCode === undefined ? null : { exitCode, output: '', at: 0 },
    evidence: {
      headBefore: null,
      headAfter: null,
      dirty: true,
      filesChanged: lines > 0 ? 1 : 0,
      insertions: lines,
      deletions: 0,
    },
  });

  it('passed its judge and changed something, then the smallest change, then the first', () => {
    expect(
      bestAttempt([
        attempt('a', 0, 40),
        attempt('b', 1, 2),
        attempt('c', 0, 10),
        attempt('d', 0, 10),
      ]),
    ).toBe('c');
    expect(bestAttempt([attempt('a', 0, 0), attempt('b', 0, 3, 'blocked')])).toBeNull();
    expect(bestAttempt([attempt('a', null, 3), attempt('b', 2, 1)])).toBeNull();
  });
});
