// Work that many clients ask for at once (websocket backlogs) done in turns: each turn of the
// event loop runs queued steps for a few ms, oldest first, so requests are served in between.

interface Step {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export class FairLane {
  private readonly waiting: Step[] = [];
  private scheduled = false;
  private turning = false;

  /** `budgetMs`: how long one turn may run steps before the loop gets to do other work. */
  constructor(private readonly budgetMs = 1) {}

  /**
   * Runs `work` in a later turn, after the steps queued before it. A client that queues its
   * next step once this resolves goes to the back: every client gets a step per round. A step
   * that returns a promise is finished before the next starts, and the budget counts all of it
   * (a read of the embedded board and its delivery; a PostgreSQL read's wait as well).
   */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.turning) return;
    this.scheduled = true;
    setImmediate(() => void this.turn());
  }

  private async turn(): Promise<void> {
    this.scheduled = false;
    this.turning = true;
    const started = performance.now();
    while (this.waiting.length > 0 && performance.now() - started < this.budgetMs) {
      const step = this.waiting.shift()!;
      try {
        step.resolve(await step.work());
      } catch (err) {
        step.reject(err);
      }
    }
    this.turning = false;
    if (this.waiting.length > 0) this.schedule();
  }
}
