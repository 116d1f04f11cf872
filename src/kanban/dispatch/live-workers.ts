// The worker processes this instance supervises, by run: a handle on each, nothing the board
// already knows (the board's running rows stay the truth).
import type { ProcessIdentity, StartedProcess } from '../../proc/index.js';
import type { ExitRecord } from '../model/types.js';
import type { DispatcherLog } from './log.js';
import type { GroupSample } from './resource-sampler.js';

export interface LiveWorker {
  runId: string;
  taskId: string;
  profile: string;
  /** The group leader (the run's wrapper), or null when no process was ever recorded. */
  leader: ProcessIdentity | null;
  /** Our own child (its exit event ends the run), or null for a worker adopted after a restart. */
  child: StartedProcess | null;
  startedAt: number;
  sample: GroupSample | null;
  /** How the leader ended: undefined while it runs; null when it ended unseen (adopted). */
  exit?: ExitRecord | null;
  /** The run's cgroup (src/proc/cgroup.ts), or null where there is none. */
  cgroup: string | null;
  /** The profile keeps what the worker leaves behind (not ended with the run). */
  keepDescendants: boolean;
  /** A start time by which the run's group was still proven ours (see RunProof). */
  groupHeldUntil: number | null;
  /** Carries the task's and run's ids. */
  log: DispatcherLog;
  /**
   * Settles once its spawn is recorded (or failed to be): its ending waits for it, so that
   * `spawned` is never written after the run's outcome.
   */
  recorded?: Promise<unknown>;
}

export class LiveWorkers {
  private readonly byRun = new Map<string, LiveWorker>();
  /** Told of each worker added and removed (the host's fence guards them meanwhile). */
  constructor(
    private readonly watch: {
      added?: (w: LiveWorker) => void;
      removed?: (w: LiveWorker) => void;
    } = {},
  ) {}
  /** The newest worker of each task (GET /tasks/:id asks for it on every request). */
  private readonly byTask = new Map<string, LiveWorker>();

  get size(): number {
    return this.byRun.size;
  }

  add(worker: LiveWorker): void {
    this.byRun.set(worker.runId, worker);
    this.byTask.set(worker.taskId, worker);
    this.watch.added?.(worker);
  }

  get(runId: string): LiveWorker | undefined {
    return this.byRun.get(runId);
  }

  /** Removes `worker` if it is still the one registered for its run. */
  remove(worker: LiveWorker): void {
    if (this.byRun.get(worker.runId) !== worker) return;
    this.byRun.delete(worker.runId);
    if (this.byTask.get(worker.taskId) === worker) this.byTask.delete(worker.taskId);
    this.watch.removed?.(worker);
  }

  all(): LiveWorker[] {
    return [...this.byRun.values()];
  }

  ofTask(taskId: string): LiveWorker | undefined {
    return this.byTask.get(taskId);
  }

  countByProfile(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const w of this.byRun.values()) counts[w.profile] = (counts[w.profile] ?? 0) + 1;
    return counts;
  }
}
