// Declares dead every other host of a shared board whose lease ran out more than
// reclaimGraceSeconds ago: their runs end as lost and their tasks are ready again. Run after each
// renewal, beside the next ones (a sweep that waits on a row another host holds must not hold
// up the lease), one at a time.
import type { Config } from '../../config/schema.js';
import { RepeatLimiter } from '../../repeat-limit.js';
import type { Board } from '../board.js';
import { declareDead } from '../moves/hosts.js';
import type { SettlementPolicy } from '../moves/settle.js';
import type { DispatcherLog } from '../dispatch/log.js';

export class DeadHostSweeper {
  private sweeping: Promise<void> | null = null;
  private readonly failures = new RepeatLimiter();

  constructor(
    private readonly deps: {
      board: Board;
      config: Config;
      policy: SettlementPolicy;
      log: DispatcherLog;
    },
  ) {}

  /** A sweep, unless one is under way; `self` (this host) is never declared dead. */
  start(self: number | null): void {
    if (this.sweeping) return;
    this.sweeping = this.sweep(self)
      .catch((err: unknown) =>
        this.failures.report(
          (obj, msg) => this.deps.log.warn(obj, msg),
          err,
          'host lease: cannot look for dead hosts; tried again at the next renewal',
        ),
      )
      .finally(() => (this.sweeping = null));
  }

  /** The sweep under way, if any, has ended. */
  async idle(): Promise<void> {
    await this.sweeping;
  }

  private async sweep(self: number | null): Promise<void> {
    const { board, config, policy, log } = this.deps;
    if (!board.shared) return;
    for (const host of await board.hosts.expired(config.cluster.reclaimGraceSeconds * 1000)) {
      if (host.id === self) continue;
      const taken = await board.transact((tx) => declareDead(tx, policy, host));
      if (taken)
        log.warn(
          { deadHostId: host.id, deadHost: host.name, lostRuns: taken.lost },
          'host declared dead: its lease ran out; its runs are lost and their tasks ready again',
        );
    }
  }
}
