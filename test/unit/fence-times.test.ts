// When a host's runs must end, from one lease renewal (src/kanban/hosts/fence-times.ts): the
// KILL before the lease can end, the TERM a grace before it, claims stopped a renewal earlier.
import { describe, expect, it } from 'vitest';
import { FENCE_MARGIN_S, fenceTimes } from '../../src/kanban/hosts/fence-times.js';

describe('fence times', () => {
  it('kills a margin before the lease ends, terms a grace before that, and stops claims a renewal earlier', () => {
    // Sent at 1,000 ms for a 30 s lease, a 5 s grace, renewals every 10 s.
    expect(fenceTimes(1_000, 30_000, 5_000, 10_000)).toEqual({
      leaseEnd: 31_000,
      killAt: 31_000 - FENCE_MARGIN_S * 1000,
      termAt: 31_000 - FENCE_MARGIN_S * 1000 - 5_000,
      claimUntil: 31_000 - FENCE_MARGIN_S * 1000 - 5_000 - 10_000,
    });
  });

  it('never terms before the renewal was sent, so a lease shorter than its grace claims nothing', () => {
    const t = fenceTimes(50_000, 6_000, 10_000, 2_000);
    expect(t.termAt).toBe(50_000);
    expect(t.killAt).toBe(54_000);
    expect(t.claimUntil).toBeLessThan(50_000);
  });

  it('ends every run before the lease whatever the settings', () => {
    for (const leaseMs of [3_000, 30_000, 600_000])
      for (const graceMs of [0, 1_000, 60_000])
        for (const renewMs of [1_000, 10_000]) {
          const t = fenceTimes(7_000, leaseMs, graceMs, renewMs);
          expect(t.killAt).toBeLessThan(t.leaseEnd);
          expect(t.termAt).toBeLessThanOrEqual(t.killAt);
          expect(t.claimUntil).toBeLessThan(t.termAt);
        }
  });
});
