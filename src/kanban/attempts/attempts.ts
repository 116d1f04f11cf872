// Best of N (docs/attempts.md), as the daemon carries it out: when an attempt ends, its task's
// other attempts are looked at; once all have ended, the judge runs in each one's worktree (on
// the host that has it), the task goes to review, and with autoPick the best judged attempt is
// picked. A pick keeps the attempt's whole worktree state on the branch gatehouse/<task id>.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../config/schema.js';
import { AppError } from '../../errors.js';
import type { WorkspaceRecord } from '../../workspaces/types.js';
import type { Workspaces } from '../../workspaces/workspaces.js';
import type { Board } from '../board.js';
import { attemptEnded, bestAttempt, type Candidate } from '../model/attempts.js';
import type { BoardEvent } from '../model/events.js';
import { newPrSync, type PrSync } from '../model/pull-request.js';
import type { Task } from '../model/types.js';
import { attemptsEnded, pickAttempt, recordJudge } from '../moves/attempts.js';
import { runJudge } from './judge.js';

/** Between tries to read the board at start, while it cannot be reached. */
const START_RETRY_MS = 1000;
/** A judge longer than this is ended (its attempt judged as failed). */
const JUDGE_TIMEOUT_MS = 30 * 60_000;

export interface AttemptsDeps {
  board: Board;
  config: Config;
  room: Workspaces;
  onError: (err: unknown, taskId: string) => void;
}

export class Attempts {
  /** Tasks whose attempts are being judged here. */
  private readonly judging = new Set<string>();
  /** Tasks an attempt of which is being picked here (its worktree and setup can take minutes). */
  private readonly picking = new Set<string>();
  private stopFollowing: (() => void) | null = null;
  private retry: NodeJS.Timeout | null = null;

  constructor(private readonly deps: AttemptsDeps) {}

  /** Follows the board; a task whose attempts all ended while no daemon ran goes on now. */
  async start(): Promise<void> {
    this.stopFollowing = this.deps.board.bus.subscribe((event) => this.heard(event));
    await this.lookOnce();
  }

  /** The tasks waiting for their attempts; the board unreachable, tried again (never fatal). */
  private async lookOnce(): Promise<void> {
    if (!this.stopFollowing) return;
    let tasks;
    try {
      ({ tasks } = await this.deps.board.tasks.open(10_000));
    } catch (err) {
      this.deps.onError(err, '');
      this.retry = setTimeout(() => void this.lookOnce(), START_RETRY_MS);
      this.retry.unref();
      return;
    }
    for (const t of tasks)
      if (t.awaiting === 'attempts')
        await this.check(t.id).catch((err: unknown) => this.deps.onError(err, t.id));
  }

  stop(): void {
    this.stopFollowing?.();
    this.stopFollowing = null;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
  }

  private heard(event: BoardEvent): void {
    if (event.taskId === null) return;
    if (event.kind === 'attempts_started' || this.endsAttempt(event))
      void this.check(event.taskId).catch((err: unknown) =>
        this.deps.onError(err, event.taskId ?? ''),
      );
  }

  private endsAttempt(event: BoardEvent): boolean {
    return [
      'completed',
      'blocked',
      'archived',
      'gave_up',
      'budget_exceeded',
      'budget_reached',
      'approved',
      'pr_blocked',
    ].includes(event.kind);
  }

  /** Looks at the task (or the task it is an attempt of): all its attempts ended, it goes on. */
  async check(taskId: string): Promise<void> {
    const { board } = this.deps;
    const task = await board.tasks.get(taskId);
    const parentId = task?.attempts ? task.id : task?.attemptOf;
    if (!parentId || this.judging.has(parentId)) return;
    // Taken before anything is awaited: two attempts ending together judge once.
    this.judging.add(parentId);
    try {
      const parent = parentId === task?.id ? task : await board.tasks.get(parentId);
      if (!parent?.attempts || parent.awaiting !== 'attempts') return;
      const attempts = (
        await Promise.all(parent.attempts.ids.map((id) => board.tasks.get(id)))
      ).filter((t): t is Task => t !== null);
      if (!attempts.every((a) => attemptEnded(a.status))) return;
      const judge = parent.attempts.judge;
      if (judge) {
        for (const a of attempts) {
          // On a shared board, judged by the host that has its worktree.
          if (a.status === 'archived' || a.judge || !this.hasHere(a)) continue;
          const result = await this.judge(a, judge.command).catch((err: unknown) => ({
            exitCode: null,
            output: `the judge could not run: ${(err as Error).message}`,
          }));
          await board.transact((tx) => recordJudge(tx, a.id, { ...result, at: tx.now }));
        }
        // Another host's attempts are judged there: the last judge moves the task on.
        const now = await Promise.all(attempts.map((a) => board.tasks.get(a.id)));
        if (now.some((a) => a && a.status !== 'archived' && a.judge === null)) return;
      }
      if (!(await board.transact((tx) => attemptsEnded(tx, parentId)))) return;
      if (parent.attempts.autoPick === 'judge') {
        const best = bestAttempt(await this.candidates(parent.attempts.ids));
        if (best) await this.pick(parentId, best, 'judge');
      }
    } finally {
      this.judging.delete(parentId);
    }
  }

  /** The attempt's worktree is on this host. */
  private hasHere(a: Task): boolean {
    return (
      a.workspace !== null &&
      a.workspace.host === this.deps.config.cluster.hostName &&
      a.workspace.state !== 'removed' &&
      existsSync(a.workspace.path)
    );
  }

  private async judge(attempt: Task, command: string[]) {
    const { config, room } = this.deps;
    const profile = config.workers.profiles[attempt.assignee ?? config.workers.defaultProfile];
    if (!profile) return { exitCode: null, output: `no profile "${attempt.assignee}" here` };
    const sandboxed = profile.sandbox.kind === 'bwrap';
    return runJudge({
      command,
      cwd: attempt.workspace!.path,
      profile,
      config,
      git:
        sandboxed && attempt.workspace!.kind === 'worktree'
          ? await room.gitView(attempt.id, attempt.workspace!)
          : { mounts: [], env: {} },
      dir: join(config.dataDir, 'judges', attempt.id),
      timeoutMs: JUDGE_TIMEOUT_MS,
    });
  }

  /** Each attempt with its judge's say and what its last run did to its worktree. */
  async candidates(ids: readonly string[]): Promise<Candidate[]> {
    const out: Candidate[] = [];
    for (const id of ids) {
      const t = await this.deps.board.tasks.get(id);
      if (!t) continue;
      const runs = await this.deps.board.runs.forTask(id);
      const evidence = runs.findLast((r) => r.workspace !== null)?.workspace ?? null;
      out.push({ id, status: t.status, judge: t.judge, evidence });
    }
    return out;
  }

  /** Keeps `attemptId`: its work on gatehouse/<task id>, the task done, the others archived. */
  async pick(parentId: string, attemptId: string, by: string): Promise<Task> {
    // Taken before anything is awaited: a second pick meanwhile (a retry, autoPick) is refused.
    if (this.picking.has(parentId))
      throw new AppError('INVALID_TRANSITION', `an attempt of task ${parentId} is being picked`);
    this.picking.add(parentId);
    try {
      return await this.pickNow(parentId, attemptId, by);
    } finally {
      this.picking.delete(parentId);
    }
  }

  private async pickNow(parentId: string, attemptId: string, by: string): Promise<Task> {
    const { board, room } = this.deps;
    const parent = await board.tasks.get(parentId);
    if (!parent) throw new AppError('TASK_NOT_FOUND', `no task ${parentId}`);
    if (!parent.attempts?.ids.includes(attemptId))
      throw new AppError('VALIDATION_FAILED', `${attemptId} is not an attempt of task ${parentId}`);
    if (parent.status !== 'review' || parent.attempts.picked !== null)
      throw new AppError(
        'INVALID_TRANSITION',
        `task ${parentId} is ${parent.status}: an attempt is picked once all have ended, and once`,
      );
    const attempt = await board.tasks.get(attemptId);
    const ws = attempt?.workspace ?? null;
    let branch: string | null = null;
    if (ws?.kind === 'worktree') {
      // Kept from its worktree, on the host that has it: never a pick that keeps nothing.
      if (!attempt || !this.hasHere(attempt))
        throw new AppError(
          'INVALID_TRANSITION',
          ws.host !== this.deps.config.cluster.hostName
            ? `attempt ${attemptId}'s worktree is on host ${ws.host}: pick it there`
            : `attempt ${attemptId}'s worktree is gone${ws.preservedRef ? ` (its work is on ${ws.preservedRef})` : ''}`,
        );
      branch = `gatehouse/${parentId}`;
      await room
        .keepAsBranch(
          ws,
          branch,
          `gatehouse: attempt ${attemptId} of task ${parentId}, picked by ${by}`,
        )
        .catch(refused(`attempt ${attemptId}'s work cannot be kept on ${branch}`));
    }
    const pr =
      ws?.repo && room.repo(ws.repo)?.pr ? await this.forPullRequest(attempt!, ws.repo) : null;
    return board.transact((tx) => pickAttempt(tx, parentId, attemptId, branch, by, pr));
  }

  /**
   * In a repository with pull requests, the task's worktree made on its kept branch (with the
   * repository's setup, as for a run), and its work marked to be published as its pull request.
   */
  private async forPullRequest(
    attempt: Task,
    repo: string,
  ): Promise<{ workspace: WorkspaceRecord; sync: PrSync }> {
    const { board, config, room } = this.deps;
    const parentId = attempt.attemptOf!;
    const profile = config.workers.profiles[attempt.assignee ?? config.workers.defaultProfile];
    if (!profile) throw new AppError('VALIDATION_FAILED', `no profile "${attempt.assignee}" here`);
    const lastRun = (await board.runs.forTask(attempt.id)).at(-1)?.id ?? attempt.id;
    const dir = join(config.dataDir, 'judges', parentId);
    mkdirSync(dir, { recursive: true });
    const made = await room
      .prepareFromBranch(
        parentId,
        repo,
        profile,
        { ...config.workerEnv, ...profile.env, GATEHOUSE_TASK_ID: parentId },
        join(dir, 'setup.log'),
      )
      .catch(
        refused(
          `task ${parentId}'s worktree for its pull request cannot be made (pick again once fixed)`,
        ),
      );
    // The commit trailer names the attempt's run, whose work this is.
    return { workspace: made.record, sync: newPrSync(repo, lastRun) };
  }
}

/** A git or workspace failure of a pick, said as a 409: nothing was picked. */
function refused(what: string): (err: unknown) => never {
  return (err) => {
    if (err instanceof AppError) throw err;
    throw new AppError('INVALID_TRANSITION', `${what}: ${(err as Error).message}`);
  };
}
