// When a host's runs must end, from one lease renewal (docs/operations.md, hosts and their
// leases): pure, on the boot clock, which never steps.

/** Seconds before the lease ends by which every worker must be gone (clock steps, reaction). */
export const FENCE_MARGIN_S = 2;

export interface FenceTimes {
  /** The lease ends no earlier than this. */
  leaseEnd: number;
  /** Each run's group is sent TERM… */
  termAt: number;
  /** …and KILL, before the lease ends. */
  killAt: number;
  /** New claims stop here: a worker started later would be ended at once. */
  claimUntil: number;
}

/**
 * The lease was extended by a statement sent at `sentAt` for `leaseMs`: it ends no earlier than
 * sentAt + leaseMs by the database's clock, whatever the wall clocks say. Workers get their TERM
 * a grace before their KILL, which comes a margin before the lease ends; claims stop a renewal's
 * worth before the TERM. The TERM never comes before the renewal was sent.
 */
export function fenceTimes(
  sentAt: number,
  leaseMs: number,
  killGraceMs: number,
  renewMs: number,
): FenceTimes {
  const leaseEnd = sentAt + leaseMs;
  const killAt = leaseEnd - FENCE_MARGIN_S * 1000;
  const termAt = Math.max(killAt - killGraceMs, sentAt);
  return { leaseEnd, termAt, killAt, claimUntil: termAt - renewMs };
}
