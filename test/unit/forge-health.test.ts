// When a forge is asked again after a failure (src/pulls/forge-health.ts): pure timing.
import { describe, expect, it } from 'vitest';
import { ForgeError } from '../../src/forges/types.js';
import { ForgeHealth, retryAt, statusOf } from '../../src/pulls/forge-health.js';

describe("a forge's backoff", () => {
  it('waits for a rate limit as long as the forge said', () => {
    expect(retryAt(new ForgeError('rate_limited', 429, 'x', 90_000), 1, 0)).toBe(90_000);
    // Never sooner than a second, even when the forge's reset is already past.
    expect(retryAt(new ForgeError('rate_limited', 403, 'x', 10), 1, 5_000)).toBe(6_000);
  });

  it('backs off from 5 s, doubling, up to 5 minutes', () => {
    const err = new ForgeError('unavailable', 502, 'x');
    expect([1, 2, 3, 4, 7, 20].map((n) => retryAt(err, n, 0))).toEqual([
      5_000, 10_000, 20_000, 40_000, 300_000, 300_000,
    ]);
  });

  it('is failed on a refused token until a request succeeds', () => {
    expect(statusOf(new ForgeError('auth', 401, 'x'))).toBe('failed');
    expect(statusOf(new Error('socket hang up'))).toBe('unavailable');
    const health = new ForgeHealth('app', 'github');
    health.failed(new ForgeError('auth', 401, 'Bad credentials'), 0);
    expect([health.status, health.ready(4_999), health.ready(5_000)]).toEqual([
      'failed',
      false,
      true,
    ]);
    health.succeeded();
    expect([health.status, health.lastError, health.ready(0)]).toEqual(['ok', null, true]);
  });
});
