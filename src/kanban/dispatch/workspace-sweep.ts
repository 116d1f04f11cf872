// Done tasks' workspaces, kept workspaces.keepDays after the task was done, then retired (their
// content preserved first): at start and every hour, a batch at a time, on a timer of its own.
import type { Config } from '../../config/schema.js';
import { RepeatLimiter } from '../../repeat-limit.js';
import type { Board } from '../board.js';
import type { DispatcherLog } from './log.js';
import type { TaskWorkspaces } from './task-workspaces.js';

const DAY_MS = 24 * 3600 * 1000;
const INTERVAL_MS = 3600 * 1000;
const BATCH = 100;

export class WorkspaceSweep {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private readonly failures = new RepeatLimiter();

  constructor(
    private readonly board: Board,
    private readonly workspaces: TaskWorkspaces,
    private readonly config: Pick<Config, 'workspaces'>,
    private readonly log: DispatcherLog,
    /** Whether the board is still open (a pass after close does nothing). */
    private readonly isOpen: () => boolean,
  ) {}

  start(): void {
    if (this.config.workspaces.keepDays === 0) return;
    this.timer = setInterval(() => this.safePass(), INTERVAL_MS);
    this.timer.unref();
    setImmediate(() => this.safePass());
  }

  /** Retires the workspaces of tasks done longer ago than keepDays; how many it looked at. */
  pass(): Promise<number> {
    this.running ??= this.passOnce().finally(() => (this.running = null));
    return this.running;
  }

  private async passOnce(): Promise<number> {
    const { keepDays } = this.config.workspaces;
    if (keepDays === 0) return 0;
    const before = this.board.clock() - keepDays * DAY_MS;
    const ids = await this.board.tasks.doneWithWorkspace(before, BATCH);
    for (const id of ids) await this.workspaces.retire(id);
    return ids.length;
  }

  private safePass(): void {
    if (!this.isOpen()) return;
    this.pass().catch((err: unknown) =>
      this.failures.report((o, m) => this.log.warn(o, m), err, 'workspaces: the sweep failed'),
    );
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }
}
