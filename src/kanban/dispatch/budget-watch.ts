// A live agent run's tokens against its task's budget (docs/budgets.md), at each tick: the tokens
// its agent printed so far (claude: each answer's usage as it streams; codex: at each turn's end)
// added to what the task's earlier runs spent. Past the budget the run is ended as
// budget_exceeded; past 80 % of it, a warning once per run.
import type { AgentReading } from '../../agents/types.js';
import type { Config } from '../../config/schema.js';
import type { Board } from '../board.js';
import { spentByRuns, tokensOf, WARN_AT, type Budget } from '../model/budget.js';
import { warnBudget } from '../moves/budget.js';
import type { LiveWorker } from './live-workers.js';

export interface BudgetWatchDeps {
  board: Board;
  workers: Config['workers'];
  /** Ends the run as budget_exceeded, with why. */
  stop: (worker: LiveWorker, reason: string) => Promise<void>;
  track: (what: string, work: () => Promise<unknown>) => void;
}

/** How often a live run's budget is read again (a person may raise it meanwhile). */
const REREAD_MS = 2000;

interface Allowance {
  /** The task's budget in force (with a tokens figure). */
  budget: Budget & { tokens: number };
  /** The tokens its earlier runs spent. */
  before: number;
}

interface Watched {
  /** undefined until first read; null: no tokens budget. */
  allowance?: Allowance | null;
  /** performance.now() of the last read begun, or null while one is under way. */
  readAt: number | null;
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
        w = { readAt: null, warned: false, stopping: false };
        this.watched.set(worker.runId, w);
        this.readAllowance(worker, w);
        continue;
      }
      if (w.readAt !== null && performance.now() - w.readAt > REREAD_MS)
        this.readAllowance(worker, w);
      if (!w.allowance || w.stopping) continue;
      const used = w.allowance.before + tokensOf(reading.usage);
      const limit = w.allowance.budget.tokens;
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
      } else if (!w.warned && used >= limit * WARN_AT && w.allowance.before < limit * WARN_AT) {
        // Once, by the run that passes 80 % (not again by each run after it).
        w.warned = true;
        const { budget } = w.allowance;
        this.deps.track('budget warning', () =>
          this.deps.board.transact((tx) =>
            warnBudget(tx, worker.taskId, worker.runId, `spent ${used} of ${limit} tokens`, budget),
          ),
        );
      }
    }
    for (const runId of this.watched.keys()) if (!seen.has(runId)) this.watched.delete(runId);
  }

  /** Reads the run's task's budget in force and what its earlier runs spent; retried if it fails. */
  private readAllowance(worker: LiveWorker, w: Watched): void {
    w.readAt = null;
    this.deps.track('budget read', async () => {
      try {
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
          budget: { ...budget, tokens: budget.tokens },
          before: spentByRuns(earlier).tokens,
        };
      } finally {
        w.readAt = performance.now();
      }
    });
  }
}
