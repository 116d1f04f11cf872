// Starting a claimed run: its cgroup and wrapper (worker-spawn.ts), its handle among the live
// workers, its exit watched; or, when it cannot start, its run settled at once.
import type { Config, Profile } from '../../config/schema.js';
import { startTimeNow } from '../../proc/index.js';
import type { Board } from '../board.js';
import type { Claim } from '../moves/claim.js';
import { recordSpawn } from '../moves/records.js';
import { settleRun, type SettlementPolicy } from '../moves/settle.js';
import type { LiveWorker, LiveWorkers } from './live-workers.js';
import type { DispatcherLog } from './log.js';
import type { RunCgroups } from './run-cgroups.js';
import { decodeStatus, readExitRecord, runDir } from './run-files.js';
import { prepareRun, spawnWorker, type Spawned } from './worker-spawn.js';
import type { Launching } from './launching.js';
import type { TaskWorkspaces } from './task-workspaces.js';
import { recordWorkspace } from '../moves/workspace.js';
import type { Prepared, RunStart } from '../../workspaces/workspaces.js';
import { SetupStopped } from '../../workspaces/setup.js';
import type { RunTokens } from '../../mcp/run-token.js';
import { closeSync, mkdirSync } from 'node:fs';
import { LEASE_LOST_BEFORE_START } from '../model/exit-classifier.js';
import { planAgentRun, type AgentStart } from './agent-runs.js';

export interface LauncherDeps {
  board: Board;
  policy: SettlementPolicy;
  config: Config;
  log: DispatcherLog;
  live: LiveWorkers;
  cgroups: RunCgroups | null;
  workspaces: TaskWorkspaces;
  launching: Launching;
  /** The daemon's base URL for GATEHOUSE_URL (known once the server listens). */
  baseUrl: () => string;
  /** Its leader has exited: the run's ending begins. */
  onExit: (worker: LiveWorker) => void;
  /**
   * Whether the run's worker may be started now, checked right before its spawn: null when this
   * host no longer holds its lease. Otherwise the run is guarded at the fence from before its
   * fork, and `until` is the boot-clock deadline its wrapper must start it before (null on a
   * board of one host): a fork held up past the lease starts nothing.
   */
  admit: (runId: string, cgroup: string | null) => { until: number | null } | null;
  /** An admitted run whose worker was not started after all: no longer guarded. */
  withdraw: (runId: string) => void;
  /** Each run's own MCP token (docs/mcp.md). */
  runTokens: RunTokens;
}

export class Launcher {
  constructor(private readonly deps: LauncherDeps) {}

  /**
   * Spawns the claim's worker, or, when `startable` is false (its host lost its lease after the
   * claim), starts nothing and ends the run `interrupted`, not counted.
   */
  async launch(claim: Claim, profile: Profile, startable: boolean): Promise<void> {
    const log = this.deps.log.child({ taskId: claim.task.id, runId: claim.run.id });
    if (!startable) {
      await this.settleUnstarted(claim, 'interrupted', LEASE_LOST_BEFORE_START);
      return;
    }
    const workspace = await this.workspace(claim, profile);
    if (workspace === false) return;
    // Someone else pushed to its PR's branch, and the two diverged: the agent is asked to
    // integrate their commits (docs/pull-requests.md).
    if (workspace?.note) {
      const before = claim.task.instructions;
      claim = {
        ...claim,
        task: {
          ...claim.task,
          instructions: before ? `${before}\n\n${workspace.note}` : workspace.note,
        },
      };
    }
    // Every termination of the run waits for this to end (launching.ts): what it ends is then
    // the worker started here, or nothing. From here on, not while a workspace is made (that may
    // take minutes: a termination meanwhile settles the run, and recordWorkspace says so).
    await this.deps.launching.during(claim.run.id, () =>
      this.start(claim, profile, workspace, log),
    );
  }

  /** An agent's plan, the run's folder, its worker spawned and supervised, its spawn recorded. */
  private async start(
    claim: Claim,
    profile: Profile,
    workspace: (Prepared & { start: RunStart }) | null,
    log: DispatcherLog,
  ): Promise<void> {
    const { config, cgroups } = this.deps;
    let agent: AgentStart | null = null;
    if (profile.agent) {
      try {
        agent = await planAgentRun(
          this.deps.board,
          claim,
          profile.agent,
          profile.env,
          workspace?.record ?? null,
          workspace?.record.path ?? profile.cwd,
          profile.sandbox.kind === 'bwrap',
          claim.task.budget ?? profile.budget,
        );
      } catch (err) {
        await this.settleUnstarted(claim, 'spawn_failed', (err as Error).message);
        return;
      }
    }
    let spawned: Spawned;
    const cgroup =
      (await cgroups?.make(claim.run.id, profile.sandbox.limits, (files) =>
        log.warn({ files }, "the run's cgroup refused some of its profile's limits"),
      )) ?? null;
    try {
      // Before the fork: a run start that cannot be written (a full disk) starts nothing.
      if (workspace)
        this.deps.workspaces.room.writeRunStart(
          runDir(config.dataDir, claim.run.id),
          workspace.start,
        );
      const prepared = await prepareRun({
        agent,
        cgroup,
        claim,
        profile,
        dataDir: config.dataDir,
        baseUrl: this.deps.baseUrl(),
        inheritedEnv: config.workerEnv,
        config,
        mcp: profile.mcp
          ? { url: `${this.deps.baseUrl()}/mcp`, token: this.deps.runTokens.of(claim.run.id) }
          : null,
        workspace: workspace && {
          cwd: workspace.record.path,
          env: workspace.env,
          mounts: workspace.mounts ?? [],
        },
      });
      if (!prepared.ok) spawned = prepared;
      else {
        // A freeze (SIGSTOP, a starved machine) while the folder was written may have cost the
        // lease, and the run may be another host's by now: checked again right before the
        // spawn, whose wrapper starts no worker past the lease (`until`).
        const admitted = this.deps.admit(claim.run.id, cgroup);
        if (!admitted) {
          closeSync(prepared.run.logFd);
          await cgroups?.ended(cgroup, false);
          await this.settleUnstarted(claim, 'interrupted', LEASE_LOST_BEFORE_START);
          return;
        }
        spawned = await spawnWorker(prepared.run, admitted.until);
        if (!spawned.ok) this.deps.withdraw(claim.run.id);
      }
    } catch (err) {
      // The run folder could not be written (ENOSPC, EACCES): nothing was started.
      spawned = { ok: false, error: `cannot prepare the run folder: ${(err as Error).message}` };
    }
    if (!spawned.ok) {
      const error = spawned.error;
      await cgroups?.ended(cgroup, false);
      await this.settleUnstarted(claim, 'spawn_failed', error);
      log.warn({ error }, 'worker could not be spawned');
      return;
    }
    const { child, proc } = spawned;
    const worker: LiveWorker = {
      runId: claim.run.id,
      taskId: claim.task.id,
      profile: profile.name,
      leader: { pid: proc.pid, startTime: proc.startTime, bootId: proc.bootId },
      child,
      cgroup,
      keepDescendants: profile.keepDescendants ?? false,
      startedAt: claim.run.startedAt,
      sample: null,
      groupHeldUntil: null,
      log,
    };
    this.deps.live.add(worker);
    child.onExit(({ code, signal, reaped }) => {
      // Reaped just now, its group cannot have been reused yet: whatever is in it now started
      // while it was ours.
      if (reaped) worker.groupHeldUntil = startTimeNow();
      const seen = code !== null ? decodeStatus(code) : { exitCode: null, signal };
      const recorded = readExitRecord(runDir(config.dataDir, worker.runId));
      // "Not started" only when the wrapper itself ended so: a worker can write exit.json too.
      worker.exit =
        recorded?.notStarted && !(code === 125 && signal === null) ? seen : (recorded ?? seen);
      this.deps.onExit(worker);
    });
    // Supervised first: if recording it fails (a full disk), its exit still ends the run, from
    // proc.json and exit.json.
    const recorded = this.deps.board.transact((tx) =>
      recordSpawn(tx, claim.task.id, claim.run.id, proc, profile.name),
    );
    worker.recorded = recorded.catch(() => undefined);
    try {
      await recorded;
    } catch (err) {
      log.error({ err, workerPid: proc.pid }, 'worker spawned but not recorded');
      return;
    }
    log.info({ workerPid: proc.pid }, 'worker spawned');
  }

  /**
   * The claim's workspace, made or found and recorded on the task, with the state it starts
   * from; null when its profile has none; false when the run was settled instead (it could not
   * be made: spawn_failed with why).
   */
  private async workspace(
    claim: Claim,
    profile: Profile,
  ): Promise<(Prepared & { start: RunStart }) | null | false> {
    if (profile.workspace === 'none') return null;
    const { board, workspaces, config } = this.deps;
    try {
      mkdirSync(runDir(config.dataDir, claim.run.id), { recursive: true });
      const prepared = await workspaces.prepare(
        claim.task.id,
        claim.run.id,
        claim.task.workspace,
        profile,
        claim.task.repo,
        claim.run.logPath,
        claim.task.pr !== null,
      );
      if (!prepared) return null;
      const start = await workspaces.room.runStart(prepared.record);
      const current = await board.transact((tx) =>
        recordWorkspace(tx, claim.task.id, claim.run.id, prepared.record, prepared.source),
      );
      // Settled meanwhile (archived while its workspace was made): nothing to start.
      if (!current) return false;
      return { ...prepared, start };
    } catch (err) {
      // Its setup ended by the run's termination, which settles the run (an archive, a reclaim).
      if (err instanceof SetupStopped && err.byTermination) return false;
      const error = (err as Error).message;
      // Its setup ended by the daemon's stop: interrupted, not counted.
      await this.settleUnstarted(
        claim,
        err instanceof SetupStopped ? 'interrupted' : 'spawn_failed',
        error,
      );
      this.deps.log.warn(
        { taskId: claim.task.id, runId: claim.run.id, error },
        'workspace could not be made',
      );
      return false;
    }
  }

  /** A claim whose worker was never started: its run ends with `outcome`, nothing to clean up. */
  private async settleUnstarted(
    claim: Claim,
    outcome: 'spawn_failed' | 'interrupted',
    error: string,
  ): Promise<void> {
    await this.deps.board.transact((tx) =>
      settleRun(tx, this.deps.policy, {
        taskId: claim.task.id,
        runId: claim.run.id,
        outcome,
        exitCode: null,
        signal: null,
        error,
        procGone: true,
      }),
    );
  }
}
