import { describe, expect, it } from 'vitest';
import { together } from '../../src/kanban/moves/together.js';

describe('together (statements of one move asked at once)', () => {
  it('answers every value in the order asked', async () => {
    const [a, b, c] = await together([Promise.resolve(1), 'two', Promise.resolve([3])]);
    expect([a, b, c]).toEqual([1, 'two', [3]]);
  });

  it('throws a step’s failure only once every other step has ended, so none goes on after the move was undone', async () => {
    const steps: string[] = [];
    // A step of several statements (a child's promotion) still under way when another fails.
    const slow = (async () => {
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      steps.push('slow step ended');
    })();
    const failing = Promise.reject(new Error('statement failed'));
    await expect(
      together([slow, failing]).finally(() => steps.push('failure thrown')),
    ).rejects.toThrow('statement failed');
    expect(steps).toEqual(['slow step ended', 'failure thrown']);
  });
});
