// A live agent run's tokens against its task's budget (docs/budgets.md), at each tick: the tokens
// its agent printed so far (claude: each answer's usage as it streams; codex: at each turn's end)
// added to what the task's earlier runs spent. Past the budget the run is ended as
// budget_exceeded; past 80 % of it, a warning once per run.
import type { AgentReading } from '../../agents/types.js';
import type { Config } from '../../config/schema.js';
import type { Board } from '../board.js';
import { spentOf, tokensOf, WARN_AT } from '../model/budget.js';
import { warnBudget } from '../moves/budget.js';
import type { LiveWorker } from './live-workers.js';

export interface BudgetWatchDeps {
  board: Board;
  workers: Config['workers'];
  /** Ends the run as budget_exceeded, with why. */
  stop: (worker: LiveWorker, reason: string) => Promise<void>;
  track: (what: string, work: () => Promise<unknown>) => void;
}

interface Allowance {
  /** The task's tokens budget. */
  limit: number;
  /** What its earlier runs spent of it. */
  before: number;
}

interface Watched {
  /** undefined while being read; null: no tokens budget. */
  allowance?: Allowance | null;
  warned: boolean;
  stopping: boolean;
}

export class BudgetWatch {
  private readonly watched = new Map<string, Watched>();

  constructor(private readonly deps: BudgetWatchDeps) {}

  /** What each live agent run printed so far; runs not among them are forgotten. */
  check(readings: readonly { worker: LiveWorker; reading: AgentReading }[]): void {
    const seen = new Set<string>();
    for (const { worker, reading } of readings) {
      seen.add(worker.runId);
      let w = this.watched.get(worker.runId);
      if (!w) {
        w = { warned: false, stopping: false };
        this.watched.set(worker.runId, w);
        this.readAllowance(worker, w);
        continue;
      }
      if (!w.allowance || w.stopping) continue;
      const used = w.allowance.before + tokensOf(reading.usage);
      const { limit } = w.allowance;
      if (used >= limit) {
        w.stopping = true;
        const reason = `budget reached (${used} of ${limit} tokens)`;
        worker.log.warn({ used, limit }, 'agent run ended at its budget');
        this.deps.track('budget stop', () =>
          this.deps.stop(worker, reason).catch((err: unknown) => {
            w.stopping = false;
            throw err;
          }),
        );
      } else if (!w.warned && used >= limit * WARN_AT) {
        w.warned = true;
        this.deps.track('budget warning', () =>
          this.deps.board.transact((tx) =>
            warnBudget(tx, worker.taskId, worker.runId, `spent ${used} of ${limit} tokens`),
          ),
        );
      }
    }
    for (const runId of this.watched.keys()) if (!seen.has(runId)) this.watched.delete(runId);
  }

  private readAllowance(worker: LiveWorker, w: Watched): void {
    this.deps.track('budget read', async () => {
      const task = await this.deps.board.tasks.get(worker.taskId);
      const budget = task?.budget ?? this.deps.workers.profiles[worker.profile]?.budget ?? null;
      if (!budget?.tokens) {
        w.allowance = null;
        return;
      }
      const earlier = (await this.deps.board.runs.forTask(worker.taskId)).filter(
        (r) => r.id !== worker.runId,
      );
      w.allowance = {
        limit: budget.tokens,
        before: spentOf(earlier.map((r) => r.agent?.usage)).tokens,
      };
    });
  }
}
