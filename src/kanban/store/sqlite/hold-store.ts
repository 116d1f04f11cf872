// SQL for profile holds on SQLite (docs/agents.md): a profile a rate limit holds until its reset.
import type { HoldTable } from '../contract.js';
import type { ProfileHold } from '../records/hold.js';
import type { Db } from './db.js';

export class HoldStore implements HoldTable {
  private readonly all;
  private readonly put;
  private readonly drop;
  private readonly expire;

  constructor(db: Db) {
    this.all = db.prepare<[number], ProfileHold>(
      'SELECT profile, until, reason, at FROM profile_holds WHERE until > ? ORDER BY profile',
    );
    // A later reset wins: two runs limited at once never shorten each other's hold.
    this.put = db.prepare(`INSERT INTO profile_holds (profile, until, reason, at)
      VALUES (@profile, @until, @reason, @at)
      ON CONFLICT (profile) DO UPDATE SET until = excluded.until, reason = excluded.reason,
        at = excluded.at WHERE profile_holds.until < excluded.until`);
    this.drop = db.prepare('DELETE FROM profile_holds WHERE profile = ? AND until > ?');
    this.expire = db.prepare('DELETE FROM profile_holds WHERE until <= ?');
  }

  /** The holds still in force at `now`. */
  async active(now: number): Promise<ProfileHold[]> {
    return this.all.all(now);
  }

  /** Holds the profile until `hold.until` unless a later hold is in force; whether it did. */
  async hold(hold: ProfileHold): Promise<boolean> {
    return this.put.run(hold).changes === 1;
  }

  /** Ends the profile's hold early; whether one was in force. */
  async release(profile: string, now: number): Promise<boolean> {
    const released = this.drop.run(profile, now).changes === 1;
    this.expire.run(now);
    return released;
  }
}
