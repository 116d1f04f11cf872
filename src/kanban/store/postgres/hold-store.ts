// Profile holds on PostgreSQL: the contract's reads and writes.
import type { HoldTable } from '../contract.js';
import type { ProfileHold } from '../records/hold.js';
import { rows, run, type Queryable } from './query.js';

export class PgHoldStore implements HoldTable {
  constructor(private readonly db: Queryable) {}

  async active(now: number): Promise<ProfileHold[]> {
    const found = await rows<ProfileHold>(
      this.db,
      'SELECT profile, until, reason, at FROM profile_holds WHERE until > $1 ORDER BY profile',
      [now],
    );
    return found.map((h) => ({ ...h, until: Number(h.until), at: Number(h.at) }));
  }

  async hold(hold: ProfileHold): Promise<boolean> {
    return (
      (await run(
        this.db,
        `INSERT INTO profile_holds (profile, until, reason, at) VALUES ($1, $2, $3, $4)
        ON CONFLICT (profile) DO UPDATE SET until = excluded.until, reason = excluded.reason,
          at = excluded.at WHERE profile_holds.until < excluded.until`,
        [hold.profile, hold.until, hold.reason, hold.at],
      )) === 1
    );
  }

  async release(profile: string, now: number): Promise<boolean> {
    const released =
      (await run(this.db, 'DELETE FROM profile_holds WHERE profile = $1 AND until > $2', [
        profile,
        now,
      ])) === 1;
    await run(this.db, 'DELETE FROM profile_holds WHERE until <= $1', [now]);
    return released;
  }
}
