// A profile hold as both engines store it: a profile a rate limit holds until its reset.

/** A profile no run of is started before `until` (epoch ms). */
export interface ProfileHold {
  profile: string;
  until: number;
  reason: string;
  /** When it was set. */
  at: number;
}
