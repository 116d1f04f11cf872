// A task's workspace through its runs: made (or found) before a run, judged after it, retired
// when the task is archived. The workspace room does the git; this keeps the board's record.
import { existsSync } from 'node:fs';
import type { Config, Profile } from '../../config/schema.js';
import { AppError } from '../../errors.js';
import { gitAuthFor } from '../../forges/git-auth.js';
import type { WorkspaceRecord } from '../../workspaces/types.js';
import { Workspaces, type Prepared } from '../../workspaces/workspaces.js';
import type { Board } from '../board.js';
import type { RunEnding } from '../moves/settle.js';
import { retireWorkspace } from '../moves/workspace.js';
import type { RunRecord } from '../store/records/run.js';
import type { DispatcherLog } from './log.js';
import { runDir } from './run-files.js';

export type RunJudgement = Pick<RunEnding, 'workspace' | 'escaped' | 'workspaceLost'>;

export class TaskWorkspaces {
  readonly room: Workspaces;
  private readonly retiring = new Map<string, Promise<void>>();
  private floor: string | null = null;
  private floorAt = -Infinity;
  private readonly usesWorkspaces: boolean;

  constructor(
    private readonly board: Board,
    private readonly config: Config,
    private readonly log: DispatcherLog,
  ) {
    this.room = new Workspaces(config.workspaces, config.cluster.hostName, config.workerEnv);
    this.usesWorkspaces = Object.values(config.workers.profiles).some(
      (p) => p.workspace !== 'none',
    );
  }

  /** The run's workspace, or null for a profile that has none. Throws a WorkspaceError. */
  async prepare(
    taskId: string,
    runId: string,
    current: WorkspaceRecord | null,
    profile: Profile,
    /** The repository the task asked for, else null (its profile's). */
    repo: string | null,
    logPath: string,
    /** It has a pull request: what someone else pushed to its branch is taken in first. */
    hasPr = false,
  ): Promise<Prepared | null> {
    if (profile.workspace === 'none') return null;
    // A retirement under way finishes first; then the record is read as it left it. A task
    // run again after its workspace was retired (a follow-up) gets a new one, from its branch
    // where it has one; what was preserved stays on its preservedRef.
    const retiring = this.retiring.get(taskId);
    if (retiring) {
      await retiring;
      current = (await this.board.tasks.get(taskId))?.workspace ?? current;
    }
    // The run's mark: a setup left running by a daemon that died is ended with the run.
    const setupEnv = {
      ...this.config.workerEnv,
      ...profile.env,
      GATEHOUSE_TASK_ID: taskId,
      GATEHOUSE_RUN_ID: runId,
    };
    const made = this.saidLost(
      current,
      await this.room.prepare(taskId, current, profile, repo, setupEnv, logPath),
    );
    const withRemote = await this.takeRemote(taskId, made, hasPr);
    // A sandboxed run sees its worktree's git through a view of its own (docs/sandbox.md).
    if (profile.sandbox.kind !== 'bwrap' || withRemote.record.kind !== 'worktree')
      return withRemote;
    const view = await this.room.gitView(taskId, withRemote.record);
    return { ...withRemote, env: { ...view.env, ...withRemote.env }, mounts: view.mounts };
  }

  /** A workspace made again because the one the task had was gone: the run is told so. */
  private saidLost(current: WorkspaceRecord | null, prepared: Prepared): Prepared {
    if (current?.state !== 'active' || prepared.source === 'found') return prepared;
    const from = prepared.record.branch ? `its branch ${prepared.record.branch}` : 'nothing';
    return {
      ...prepared,
      note: `This task's workspace was lost (removed while no run of it was there to see) and made again from ${from}: anything an earlier run left uncommitted there is gone.`,
    };
  }

  /** What someone else pushed to the task's PR branch, taken in before its run. */
  private async takeRemote(taskId: string, prepared: Prepared, hasPr: boolean): Promise<Prepared> {
    const pr = hasPr ? this.room.repo(prepared.record.repo)?.pr : null;
    if (!pr || prepared.record.kind !== 'worktree') return prepared;
    try {
      const remote = await this.room.takeRemote(prepared.record, gitAuthFor(pr));
      if (remote.state !== 'diverged') return prepared;
      return {
        ...prepared,
        note: [
          "Someone else pushed commits to this task's branch that this worktree does not have, and the two have diverged. Integrate them (fetch origin's branch and merge or rebase) before you finish; gatehouse never force-pushes. Their commits:",
          ...remote.commits.map((c) => `- ${c}`),
        ].join('\n'),
      };
    } catch (err) {
      // Origin cannot be asked now: the run goes on; a push that would lose a commit is refused.
      this.log.warn({ err, taskId }, "workspace: origin's branch could not be read before the run");
      return prepared;
    }
  }

  /** What the run did to its workspace, for its settlement; nothing when it has none. */
  async judge(run: RunRecord): Promise<RunJudgement> {
    // Most runs have no workspace: not a read more for them.
    const profile = this.config.workers.profiles[run.profile];
    if (!profile || profile.workspace === 'none') return {};
    const task = await this.board.tasks.get(run.taskId);
    const record = task?.workspace;
    if (!record || record.state !== 'active' || record.host !== this.config.cluster.hostName)
      return {};
    if (!existsSync(record.path)) return { workspaceLost: record.path };
    try {
      const end = await this.room.endRun(runDir(this.config.dataDir, run.id), record);
      const moved = end.evidence && end.evidence.headAfter !== end.evidence.headBefore;
      // Another host can take the task up from origin if this one is lost (repo.push). In the
      // background: a slow origin never holds up the run's settlement or the worker's call.
      if (moved)
        void this.room
          .push(record)
          .catch((err: unknown) =>
            this.log.warn({ err, taskId: run.taskId }, 'workspace: its branch could not be pushed'),
          );
      return {
        workspace: end.evidence,
        escaped: end.escaped.length > 0 ? { repo: record.repo!, paths: end.escaped } : null,
      };
    } catch (err) {
      // Evidence is worth having, never worth an outcome: the run settles without it.
      this.log.warn(
        { err, taskId: run.taskId, runId: run.id },
        'workspace: no evidence for the run',
      );
      return {};
    }
  }

  /** Removes the task's workspace once its content is safe, and records what was kept. */
  retire(taskId: string): Promise<void> {
    const pending = this.retiring.get(taskId);
    if (pending) return pending;
    const work = this.retireOnce(taskId).finally(() => this.retiring.delete(taskId));
    this.retiring.set(taskId, work);
    return work;
  }

  private async retireOnce(taskId: string): Promise<void> {
    const task = await this.board.tasks.get(taskId).catch(() => null);
    const record = task?.workspace;
    if (!record || record.state !== 'active' || record.host !== this.config.cluster.hostName)
      return;
    // A run still ending (a termination) may yet need it: retired once nothing runs.
    if (task.currentRunId !== null) return;
    try {
      // Looked at again under the repository's lock, right before anything is touched: a
      // task sent back meanwhile keeps its workspace.
      const removal = await this.room.remove(taskId, record, async () => {
        const now = await this.board.tasks.get(taskId);
        return (
          now !== null &&
          (now.status === 'archived' || now.status === 'done') &&
          now.currentRunId === null &&
          now.workspace?.path === record.path &&
          now.workspace.state === 'active'
        );
      });
      if (!removal) return;
      const kept = removal.preserved?.kept ? removal.preserved : null;
      await this.board.transact((tx) =>
        retireWorkspace(tx, taskId, record, {
          state: kept ? 'preserved' : 'removed',
          preservedRef: kept?.ref ?? null,
          commit: kept?.commit || null,
          why: removal.why,
          branchDeleted: removal.branchDeleted,
        }),
      );
      this.log.info({ taskId, why: removal.why }, 'workspace removed');
    } catch (err) {
      this.log.warn({ err, taskId }, 'workspace: kept, it could not be removed safely');
    }
  }

  /** The task's worktree's change against its base (GET /tasks/:id/diff). */
  async diff(taskId: string): Promise<string> {
    const task = await this.board.get(taskId);
    const record = task.workspace;
    if (record?.state !== 'active' && this.room.making(task.id))
      throw new AppError(
        'WORKSPACE_NOT_READY',
        `task ${task.id}'s worktree is being made; try again`,
      );
    if (!record || record.kind !== 'worktree')
      throw new AppError('WORKSPACE_NOT_FOUND', `task ${task.id} has no worktree`);
    if (record.state !== 'active')
      throw new AppError(
        'WORKSPACE_NOT_FOUND',
        `task ${task.id}'s worktree was removed${record.preservedRef ? `; its content is on ${record.preservedRef}` : ''}`,
      );
    if (record.host !== this.config.cluster.hostName)
      throw new AppError(
        'WORKSPACE_NOT_FOUND',
        `task ${task.id}'s worktree is on host ${record.host}; ask that host`,
      );
    try {
      return await this.room.diff(record);
    } catch (err) {
      throw new AppError(
        'WORKSPACE_NOT_FOUND',
        `task ${task.id}'s worktree cannot be read: ${(err as Error).message}`,
      );
    }
  }

  /**
   * Why no new workspace may be made now (free space below workspaces.minFreeBytes), or null;
   * looked at most once a second.
   */
  diskFloor(): string | null {
    const now = performance.now();
    if (now - this.floorAt >= 1000) {
      this.floorAt = now;
      this.floor = this.usesWorkspaces ? this.room.lowOnDisk() : null;
    }
    return this.floor;
  }
}
