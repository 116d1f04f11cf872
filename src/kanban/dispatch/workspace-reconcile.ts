// The managed root against the board, at start and every hour, on a timer of its own: done
// tasks' workspaces retired after workspaces.keepDays, archived tasks' still there retired,
// workspaces no task wants (their task deleted) removed by the same rule (content preserved
// first), anything not gatehouse's reported and never touched. The last pass is what
// GET /workspaces and the metrics show.
import type { Config } from '../../config/schema.js';
import { RepeatLimiter } from '../../repeat-limit.js';
import type { FoundWorkspace } from '../../workspaces/reconcile.js';
import type { Board } from '../board.js';
import type { DispatcherLog } from './log.js';
import type { TaskWorkspaces } from './task-workspaces.js';

const DAY_MS = 24 * 3600 * 1000;
const INTERVAL_MS = 3600 * 1000;
const BATCH = 100;
/** GET /workspaces looks again when the last look is older than this. */
const FRESH_MS = 60_000;

/** A row of GET /workspaces. */
export interface WorkspaceReport {
  taskId: string | null;
  path: string;
  kind: FoundWorkspace['kind'];
  repo: string | null;
  host: string;
  /** active: its task's; orphaned: no task wants it (removed by the rule); unknown: not ours. */
  state: 'active' | 'orphaned' | 'unknown';
  bytes: number;
  dirty: boolean;
}

export class WorkspaceReconciler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<WorkspaceReport[]> | null = null;
  private last: { at: number; changes: number; rows: WorkspaceReport[] } | null = null;
  private readonly failures = new RepeatLimiter();

  constructor(
    private readonly board: Board,
    private readonly workspaces: TaskWorkspaces,
    private readonly config: Pick<Config, 'workspaces' | 'cluster'>,
    private readonly log: DispatcherLog,
    /** Whether the board is still open (a pass after close does nothing). */
    private readonly isOpen: () => boolean,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.safePass(), INTERVAL_MS);
    this.timer.unref();
    setImmediate(() => this.safePass());
  }

  /** One pass (one at a time): retirements, then the root looked at and reconciled. */
  pass(): Promise<WorkspaceReport[]> {
    this.running ??= this.passOnce(true).finally(() => (this.running = null));
    return this.running;
  }

  /** What is under the root (the last pass's, or a fresh look that removes nothing). */
  async report(): Promise<WorkspaceReport[]> {
    // Fresh: a minute old at most, and no workspace made or removed since.
    if (
      this.last &&
      performance.now() - this.last.at < FRESH_MS &&
      this.last.changes === this.workspaces.room.changes
    )
      return this.last.rows;
    return this.running ?? this.passOnce(false);
  }

  /** The last look's workspaces by state, and their bytes (metrics). */
  byState(): { count: Record<string, number>; bytes: Record<string, number> } {
    const count: Record<string, number> = { active: 0, orphaned: 0, unknown: 0 };
    const bytes: Record<string, number> = { active: 0, orphaned: 0, unknown: 0 };
    for (const row of this.last?.rows ?? []) {
      count[row.state] = (count[row.state] ?? 0) + 1;
      bytes[row.state] = (bytes[row.state] ?? 0) + row.bytes;
    }
    return { count, bytes };
  }

  private async passOnce(act: boolean): Promise<WorkspaceReport[]> {
    if (act) await this.retireDone();
    const changes = this.workspaces.room.changes;
    const rows: WorkspaceReport[] = [];
    for (const found of await this.workspaces.room.scan()) {
      const state = await this.stateOf(found);
      rows.push({ ...found, host: this.config.cluster.hostName, state });
      if (act && state === 'orphaned') await this.removeOrphan(found);
    }
    this.last = { at: performance.now(), changes, rows };
    return rows;
  }

  private async stateOf(found: FoundWorkspace): Promise<WorkspaceReport['state']> {
    if (found.taskId === null || found.kind === 'unknown') return 'unknown';
    // Being made (or a dead daemon's half-made one, made again at the task's next claim).
    if (this.workspaces.room.making(found.taskId)) return 'active';
    const task = await this.board.tasks.get(found.taskId);
    const record = task?.workspace;
    const mine =
      record?.path === found.path &&
      record.state === 'active' &&
      record.host === this.config.cluster.hostName;
    if (mine) return 'active';
    // A task that may run again (ready, claimed, waiting on a parent) may be about to take its
    // workspace up here (a follow-up, a new worktree being recorded): never an orphan then.
    if (task && (task.status === 'ready' || task.status === 'running' || task.status === 'todo'))
      return 'active';
    return 'orphaned';
  }

  private async retireDone(): Promise<void> {
    const { keepDays } = this.config.workspaces;
    // keepDays 0: a done task's workspace stays until the task is archived.
    const doneBefore = keepDays === 0 ? 0 : this.board.clock.wall() - keepDays * DAY_MS;
    for (const id of await this.board.tasks.workspacesToRetire(doneBefore, BATCH))
      await this.workspaces.retire(id);
  }

  private async removeOrphan(found: FoundWorkspace): Promise<void> {
    try {
      // Looked at again under the repository's lock: a task may have been sent back since.
      const removal = await this.workspaces.room.removeFound(
        found,
        async () => (await this.stateOf(found)) === 'orphaned',
      );
      if (!removal) return;
      this.log.info({ path: found.path, why: removal.why }, 'workspace: no task wants it; removed');
    } catch (err) {
      this.log.warn(
        { err, path: found.path },
        'workspace: no task wants it; kept (it could not be removed safely)',
      );
    }
  }

  private safePass(): void {
    if (!this.isOpen()) return;
    this.pass().catch((err: unknown) =>
      this.failures.report((o, m) => this.log.warn(o, m), err, 'workspaces: reconciling failed'),
    );
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }
}
