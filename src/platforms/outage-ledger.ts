// A platform's outage, as its events tell it: from the breaker's first opening to its closing.
// A probe that fails re-opens the breaker without an event (it is counted), so an outage of an
// hour is three events (opened, first probe, closed with the count), not a pair of rows a cycle.
// Pure: the supervisor feeds it the breaker's moves and records what it answers.

export interface Outage {
  /** When the breaker first opened (epoch ms). */
  since: number;
  /** Failed probes since: each re-opened the breaker. */
  reopened: number;
}

export interface OutageEnded {
  reopened: number;
  openForMs: number;
  by: 'operator' | 'recovered';
}

export class OutageLedger {
  private outage: Outage | null;

  /** `carried`: the outage a restart found persisted (null when the breaker was closed). */
  constructor(carried: Outage | null) {
    this.outage = carried ? { ...carried } : null;
  }

  /**
   * The breaker opened at `at`. 'began': a new outage, to be recorded; 'reopened': a failed
   * probe of the current one (counted, not recorded); 'restored': the breaker put back as a
   * restart found it, which is nothing new.
   */
  opened(at: number, restoring: boolean): 'began' | 'reopened' | 'restored' {
    if (this.outage && restoring) return 'restored';
    if (this.outage) {
      this.outage.reopened++;
      return 'reopened';
    }
    this.outage = { since: at, reopened: 0 };
    return 'began';
  }

  /** Whether a half-open breaker is news: only the outage's first probe is recorded. */
  firstProbe(): boolean {
    return this.outage?.reopened === 0;
  }

  /** The outage is over at `now`: what to record of it, or null when there was none. */
  end(now: number, byOperator: boolean): OutageEnded | null {
    const outage = this.outage;
    if (!outage) return null;
    this.outage = null;
    return {
      reopened: outage.reopened,
      openForMs: now - outage.since,
      by: byOperator ? 'operator' : 'recovered',
    };
  }

  get current(): Readonly<Outage> | null {
    return this.outage;
  }
}
