// One dispatch pass: the best ready task of the next profile, in turn, with a free slot within
// the caps, claimed and launched. At most one claim a pass, so the caps read at its start still
// hold at its end.
import type { Config } from '../../config/schema.js';
import type { Board } from '../board.js';
import { claimTask } from '../moves/claim.js';
import type { HostLease } from '../hosts/host-lease.js';
import type { Launcher } from './launch.js';
import type { LiveWorkers } from './live-workers.js';
import { runDir } from './run-files.js';
import type { TaskWorkspaces } from './task-workspaces.js';
import type { ProfileHolds } from './profile-holds.js';

export interface ClaimPassDeps {
  board: Board;
  config: Config;
  live: LiveWorkers;
  host: HostLease;
  launcher: Launcher;
  workspaces: TaskWorkspaces;
  /** Nothing new may start: stopping, or joining the board again. */
  halted: () => boolean;
  /** Runs work whose failure is logged and retried by the tick (Dispatcher.track). */
  track: (what: string, work: () => Promise<unknown>) => void;
  /** Profiles a rate limit holds: none of their runs starts (docs/agents.md). */
  holds: ProfileHolds;
}

export class ClaimPass {
  /** Claims being launched, by run id, with their profile: they hold a slot until live. */
  private readonly starting = new Map<string, string>();
  /** Where the next pass starts among the profiles (round robin). */
  private nextProfile = 0;

  constructor(private readonly deps: ClaimPassDeps) {}

  /** Claimed and launched one task: there may be another. */
  async once(): Promise<boolean> {
    const { board, live, host, config } = this.deps;
    const workers = config.workers;
    // A launch whose worker is live already is counted once, among the live.
    const launching = [...this.starting].filter(([runId]) => !live.get(runId));
    if (this.deps.halted() || live.size + launching.length >= workers.maxConcurrent) return false;
    // A lease that cannot be renewed: the fence will end the workers, so nothing new starts.
    if (!host.claimable()) return false;
    const now = board.clock.wall();
    const busy = live.countByProfile();
    for (const [, name] of launching) busy[name] = (busy[name] ?? 0) + 1;
    const floor = this.deps.workspaces.diskFloor();
    const held = await this.deps.holds.at(now);
    const profiles = Object.values(workers.profiles);
    for (let i = 0; i < profiles.length; i++) {
      const turn = (this.nextProfile + i) % profiles.length;
      const profile = profiles[turn]!;
      if ((busy[profile.name] ?? 0) >= (profile.maxConcurrent ?? Infinity)) continue;
      if (held.has(profile.name)) continue;
      // Below workspaces.minFreeBytes no workspace is made: its tasks wait in ready.
      if (profile.workspace !== 'none' && floor !== null) continue;
      const isDefault = profile.name === workers.defaultProfile;
      // A few candidates: a task whose last run still lingers is skipped, not waited on.
      const candidates = await board.tasks.dispatchable(now, profile.name, isDefault, 9, host.name);
      for (const taskId of candidates) {
        if (this.deps.halted()) return false;
        const claim = await board.transact((tx) =>
          claimTask(tx, {
            taskId,
            profile: profile.name,
            host: host.name,
            hostId: host.id,
            leaseMs: workers.claimTtlSeconds * 1000,
            keepDescendants: profile.keepDescendants,
            checkHold: profile.agent !== null,
            logPathFor: (runId) => `${runDir(config.dataDir, runId)}/log`,
            budgets: { task: profile.budget, daily: profile.dailyBudget },
          }),
        );
        if (!claim) continue;
        this.nextProfile = (turn + 1) % profiles.length;
        // Claimed under a lease lost meanwhile: nothing is started for it (launch.ts).
        const startable = !this.deps.halted() && claim.run.hostId === host.id && host.claimable();
        // Its worker starts in the background (its folder written off the event loop, or its
        // workspace made, then the spawn): other tasks are claimed meanwhile, and the claim
        // holds its slot until its worker is live or its launch has ended.
        this.starting.set(claim.run.id, profile.name);
        this.deps.track('launch', () =>
          this.deps.launcher
            .launch(claim, profile, startable)
            .finally(() => this.starting.delete(claim.run.id)),
        );
        return true;
      }
    }
    return false;
  }
}
