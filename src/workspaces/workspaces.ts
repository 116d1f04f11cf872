// The workspace room's one face to the dispatcher: a task's workspace made (or found) before a
// run, what each run did to it, and its removal once its content is safe (docs/workspaces.md).
import { keepAsBranch } from './keep-branch.js';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statfsSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import type { Profile, RepoConfig, WorkspacesConfig } from '../config/schema.js';
import { worktreeDiff } from './diff.js';
import { gitInherits } from './git.js';
import { absorbGitView, gitViewDir, prepareGitView, removeGitView } from './git-view.js';
import type { Mount } from '../sandbox/view.js';
import { changedPaths, checkoutState, type CheckoutState } from './escape.js';
import { runEvidence } from './evidence.js';
import { checkInside, ensureRoot, makingMarker, workspacePath } from './paths.js';
import {
  commitLeftovers,
  commitsAhead,
  pushTask,
  takeRemote,
  type RemoteAuth,
  type RemoteState,
} from './publish.js';
import { removeScratch, removeWorktree, type Removal } from './remove.js';
import { RepoLocks } from './repo-lock.js';
import { runSetup, SetupStopped, type SetupStop } from './setup.js';
import { headOf } from './staged.js';
import { branchOf, type RunEvidence, type WorkspaceRecord } from './types.js';
import { scanRoot, type FoundWorkspace } from './reconcile.js';
import { baseOf, ensureWorktree, finishWorktree, pushBranch } from './worktree.js';

/** A workspace ready for a run: where the worker starts and what it is told. */
export interface Prepared {
  record: WorkspaceRecord;
  env: Record<string, string>;
  /** How it came to be: found from an earlier run, or made now (from what). */
  source: 'found' | 'new' | 'branch' | 'origin' | 'base';
  /** What the run is to be told of the workspace besides its task (origin moved on), if anything. */
  note?: string;
  /** A sandboxed run's view of its worktree's git (git-view.ts): its mounts. */
  mounts?: Mount[];
}

/** What the run folder keeps of the workspace at the run's start (workspace.json). */
export interface RunStart {
  headBefore: string | null;
  checkout: CheckoutState | null;
}

export interface RunEnd {
  evidence: RunEvidence | null;
  /** Paths of the repository's own checkout that changed while the run was live. */
  escaped: string[];
}

/** What publishing a worktree did. */
export interface Publication {
  /** The run's leftovers were committed. */
  committed: boolean;
  /** Commits the branch has that its base lacks. */
  ahead: number;
  push: 'pushed' | 'rejected' | 'nothing';
}

const RUN_START_FILE = 'workspace.json';

export class WorkspaceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkspaceError';
  }
}

export class Workspaces {
  private readonly locks = new RepoLocks();
  /** The setups running now, by task: ended when their run is terminated or the daemon stops. */
  private readonly setups = new Map<string, AbortController>();
  /**
   * Counts every workspace made and removed, once done: a listing of the root taken at another
   * count is out of date (GET /workspaces looks again).
   */
  changes = 0;

  private changed<T>(result: T): T {
    this.changes++;
    return result;
  }
  /** The tasks whose worktree is being made now. */
  private readonly makingNow = new Set<string>();
  private rootMade = false;

  constructor(
    private readonly config: WorkspacesConfig,
    private readonly hostName: string,
    /** What git inherits: the daemon's environment without its secrets (config.workerEnv). */
    gitEnv?: Record<string, string>,
  ) {
    if (gitEnv) gitInherits(gitEnv);
  }

  repo(name: string | null): RepoConfig | null {
    return name === null ? null : (this.config.repos[name] ?? null);
  }

  /** Free bytes on the root's file system are below the floor (no new workspace is made). */
  lowOnDisk(): string | null {
    if (this.config.minFreeBytes === 0) return null;
    let free: number;
    try {
      this.ensureRoot();
      const fs = statfsSync(this.config.root);
      free = fs.bavail * fs.bsize;
    } catch {
      return null;
    }
    return free < this.config.minFreeBytes
      ? `${free} bytes free on ${this.config.root}, below workspaces.minFreeBytes (${this.config.minFreeBytes}): no new workspace is made`
      : null;
  }

  private ensureRoot(): void {
    if (this.rootMade) return;
    ensureRoot(this.config.root);
    this.rootMade = true;
  }

  /**
   * The task's workspace for its next run: the one it has (found again, or made anew from its
   * branch when gone), or a new one. Throws a WorkspaceError saying why it cannot be had.
   */
  async prepare(
    taskId: string,
    current: WorkspaceRecord | null,
    profile: Profile,
    /** The repository the task asked for (checked at its creation), else null: the profile's. */
    asked: string | null,
    setupEnv: Record<string, string>,
    logPath: string,
  ): Promise<Prepared> {
    if (profile.workspace === 'none') throw new WorkspaceError('the profile has no workspace');
    try {
      this.ensureRoot();
      const path = workspacePath(this.config.root, taskId);
      if (profile.workspace === 'scratch' && (current === null || current.kind === 'scratch')) {
        const existed = checkInside(this.config.root, path);
        if (!existed) mkdirSync(path);
        const record = this.record(current, {
          kind: 'scratch',
          path,
          repo: null,
          branch: null,
          base: null,
        });
        if (!existed) this.changed(null);
        return {
          record,
          env: { GATEHOUSE_WORKSPACE: path },
          source: existed ? 'found' : 'new',
        };
      }
      const name = current?.repo ?? asked ?? profile.repo;
      const repo = this.repo(name);
      if (!repo) throw new WorkspaceError(`no repository "${name}" in workspaces.repos`);
      this.makingNow.add(taskId);
      const stop = new AbortController();
      this.setups.set(taskId, stop);
      let made;
      try {
        made = await this.locks.run(repo.path, () =>
          ensureWorktree(repo, this.config.root, taskId, path, current !== null),
        );
        await finishWorktree(repo, this.config.root, taskId, made, async (dir) => {
          if (repo.setup)
            await runSetup(
              repo.setup,
              dir,
              { ...setupEnv, GATEHOUSE_WORKSPACE: dir },
              logPath,
              (profile.maxRuntimeSeconds ?? 30 * 60) * 1000,
              stop.signal,
            );
        });
      } finally {
        if (this.setups.get(taskId) === stop) this.setups.delete(taskId);
        this.makingNow.delete(taskId);
      }
      if (made.source !== 'found') this.changed(null);
      const record = this.record(current, {
        kind: 'worktree',
        path,
        repo: repo.name,
        branch: made.branch,
        base: made.base,
      });
      return {
        record,
        env: {
          GATEHOUSE_WORKSPACE: path,
          GATEHOUSE_BRANCH: made.branch,
          GATEHOUSE_BASE: made.base,
        },
        source: made.source,
      };
    } catch (err) {
      if (err instanceof WorkspaceError || err instanceof SetupStopped) throw err;
      throw new WorkspaceError(`cannot make the task's workspace: ${(err as Error).message}`);
    }
  }

  private record(
    current: WorkspaceRecord | null,
    fields: Pick<WorkspaceRecord, 'kind' | 'path' | 'repo' | 'branch' | 'base'>,
  ): WorkspaceRecord {
    return {
      ...fields,
      host: this.hostName,
      state: 'active',
      preservedRef: current?.preservedRef ?? null,
    };
  }

  /** The workspace and the repository's checkout as a run starts (taken before its spawn). */
  async runStart(record: WorkspaceRecord): Promise<RunStart> {
    const repo = this.repo(record.repo);
    const start: RunStart = {
      headBefore: record.kind === 'worktree' ? await headOf(record.path) : null,
      checkout: repo && repo.escapeCheck ? await checkoutState(repo.path) : null,
    };
    return start;
  }

  /** Keeps runStart's answer in the run folder, where the run's end (or the next daemon) reads it. */
  writeRunStart(runDir: string, start: RunStart): void {
    const file = join(runDir, RUN_START_FILE);
    writeFileSync(`${file}.tmp`, `${JSON.stringify(start)}\n`);
    renameSync(`${file}.tmp`, file);
  }

  /**
   * A sandboxed run's view of the task's worktree's git (git-view.ts), made for its start: the
   * mounts that put it in place.
   */
  async gitView(
    taskId: string,
    record: WorkspaceRecord,
  ): Promise<{ mounts: Mount[]; env: Record<string, string> }> {
    const { repo, branch } = this.worktreeOf(record);
    return this.locks.run(repo.path, () =>
      prepareGitView(this.config.root, taskId, record.path, branch),
    );
  }

  /** What the run did to its workspace, and whether the repository's checkout changed meanwhile. */
  async endRun(runDir: string, record: WorkspaceRecord): Promise<RunEnd> {
    const start = readRunStart(runDir);
    const repo = this.repo(record.repo);
    if (record.kind !== 'worktree' || !repo) return { evidence: null, escaped: [] };
    if (!existsSync(record.path)) return { evidence: null, escaped: [] };
    // A sandboxed run's commits are in its git view until they are fetched in here.
    if (record.branch !== null && existsSync(gitViewDir(this.config.root, basename(record.path))))
      await this.locks.run(repo.path, () =>
        absorbGitView(this.config.root, basename(record.path), record.path, record.branch!),
      );
    const evidence = await runEvidence(record.path, record.base!, start?.headBefore ?? null);
    const escaped =
      start?.checkout && repo.escapeCheck
        ? changedPaths(start.checkout, await checkoutState(repo.path))
        : [];
    return { evidence, escaped };
  }

  /**
   * Removes the task's workspace once what it holds is safe; says what was kept. `stillDue`,
   * asked under the repository's lock first, may call it off (null: nothing was touched).
   */
  async remove(
    taskId: string,
    record: WorkspaceRecord,
    stillDue: () => Promise<boolean> = async () => true,
  ): Promise<Removal | null> {
    const lockKey =
      record.kind === 'scratch' ? record.path : (this.repo(record.repo)?.path ?? null);
    if (lockKey === null)
      throw new WorkspaceError(`no repository "${record.repo}" in workspaces.repos: kept`);
    return this.locks.run(lockKey, async () => {
      if (!(await stillDue())) return null;
      if (record.kind === 'scratch')
        return this.changed(removeScratch(this.config.root, record, taskId));
      const repo = this.repo(record.repo)!;
      // Its commits made in a sandbox are fetched in first: removal preserves what it holds.
      if (record.branch !== null && existsSync(gitViewDir(this.config.root, taskId)))
        await absorbGitView(this.config.root, taskId, record.path, record.branch);
      const removal = await removeWorktree(this.config.root, repo, record, taskId);
      removeGitView(this.config.root, taskId);
      rmSync(makingMarker(this.config.root, taskId), { force: true });
      return this.changed(removal);
    });
  }

  /** Everything under the root, as git and the file system have it (reconcile.ts). */
  scan(): Promise<FoundWorkspace[]> {
    return scanRoot(this.config.root, Object.values(this.config.repos));
  }

  /**
   * Removes a workspace no task wants (its task deleted, or another workspace recorded for it)
   * by the same rule as any: its content preserved first. Never one of unknown kind.
   */
  async removeFound(
    found: FoundWorkspace,
    stillDue: () => Promise<boolean>,
  ): Promise<Removal | null> {
    if (found.taskId === null || found.kind === 'unknown')
      throw new WorkspaceError(`${found.path} is not a workspace gatehouse made: kept`);
    const repo = this.repo(found.repo);
    const record: WorkspaceRecord = {
      kind: found.kind,
      path: found.path,
      repo: found.repo,
      branch: found.kind === 'worktree' ? branchOf(found.taskId) : null,
      base: repo ? await baseOf(repo) : null,
      host: this.hostName,
      state: 'active',
      preservedRef: null,
    };
    return this.remove(found.taskId, record, stillDue);
  }

  /** Pushes a worktree's branch to origin when its repository says `push`. */
  async push(record: WorkspaceRecord): Promise<boolean> {
    const repo = this.repo(record.repo);
    if (!repo?.push || record.branch === null) return false;
    await this.locks.run(repo.path, () => pushBranch(repo, record.branch!));
    return true;
  }

  /**
   * Makes the worktree's work public (docs/pull-requests.md): what the run left is committed
   * (`title`, then `trailers`), and the branch, if it has commits its base lacks, is pushed,
   * never forced. Says what was done.
   */
  async publish(
    record: WorkspaceRecord,
    title: string,
    trailers: Record<string, string>,
    auth: RemoteAuth,
  ): Promise<Publication> {
    const { repo, branch, base } = this.worktreeOf(record);
    return this.locks.run(repo.path, async () => {
      const committed = await commitLeftovers(record.path, title, trailers);
      const ahead = await commitsAhead(record.path, base);
      if (ahead === 0) return { committed, ahead, push: 'nothing' as const };
      return { committed, ahead, push: await pushTask(repo.path, branch, auth) };
    });
  }

  /** Takes in what someone else pushed to the task's branch before its next run. */
  async takeRemote(record: WorkspaceRecord, auth: RemoteAuth): Promise<RemoteState> {
    const { repo, branch } = this.worktreeOf(record);
    return this.locks.run(repo.path, () => takeRemote(record.path, repo.path, branch, auth));
  }

  private worktreeOf(record: WorkspaceRecord): { repo: RepoConfig; branch: string; base: string } {
    const repo = this.repo(record.repo);
    if (record.kind !== 'worktree' || !repo || record.branch === null || record.base === null)
      throw new WorkspaceError('only a worktree of a configured repository is published');
    if (!existsSync(record.path))
      throw new WorkspaceError(`the task's worktree ${record.path} is gone`);
    return { repo, branch: record.branch, base: record.base };
  }

  /** Ends the task's workspace setup if one runs (its run was terminated). */
  stopSetup(taskId: string, why: string): void {
    this.setups.get(taskId)?.abort({ why, byTermination: true } satisfies SetupStop);
  }

  /** Ends every setup that runs (the daemon is stopping): none outlives it. */
  stopSetups(why: string): void {
    for (const stop of this.setups.values())
      stop.abort({ why, byTermination: false } satisfies SetupStop);
  }

  /**
   * The task's workspace is being made now, by this daemon (the only one on its root). A
   * marker left by a daemon that died making it is not: such a worktree is its task's to make
   * again, or an orphan once its task is archived.
   */
  making(taskId: string): boolean {
    return this.makingNow.has(taskId);
  }

  /**
   * The task's worktree made from its own branch, which gatehouse made for it before it had a
   * worktree (docs/attempts.md: a picked attempt's work, published as the task's pull request).
   * The repository's copies and setup run as for a run's worktree.
   */
  async prepareFromBranch(
    taskId: string,
    repoName: string,
    profile: Profile,
    setupEnv: Record<string, string>,
    logPath: string,
  ): Promise<Prepared> {
    const kept: WorkspaceRecord = {
      kind: 'worktree',
      path: workspacePath(this.config.root, taskId),
      repo: repoName,
      branch: branchOf(taskId),
      base: null,
      host: this.hostName,
      state: 'removed',
      preservedRef: null,
    };
    return this.prepare(taskId, kept, profile, repoName, setupEnv, logPath);
  }

  /** Keeps a worktree's whole state on a new branch of its repository (docs/attempts.md). */
  async keepAsBranch(record: WorkspaceRecord, branch: string, message: string): Promise<string> {
    const repo = this.repo(record.repo);
    if (record.kind !== 'worktree' || !repo)
      throw new WorkspaceError('only a worktree of a configured repository is kept on a branch');
    return this.locks.run(repo.path, () => keepAsBranch(record.path, branch, message));
  }

  async diff(record: WorkspaceRecord): Promise<string> {
    if (record.kind !== 'worktree' || record.base === null)
      throw new WorkspaceError('only a worktree has a diff');
    return worktreeDiff(record.path, record.base);
  }
}

function readRunStart(runDir: string): RunStart | null {
  try {
    const value = JSON.parse(readFileSync(join(runDir, RUN_START_FILE), 'utf8')) as RunStart;
    return typeof value === 'object' && value !== null ? value : null;
  } catch {
    return null;
  }
}
