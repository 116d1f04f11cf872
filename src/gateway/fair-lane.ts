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

  /** `budgetMs`: how long one turn may run steps before the loop gets to do other work. */
  constructor(private readonly budgetMs = 1) {}

  /**
   * Runs `work` in a later turn, after the steps queued before it. A client that queues its
   * next step once this resolves goes to the back: every client gets a step per round. The
   * budget counts the synchronous part of a step (a read of the embedded board is all of it).
   */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.turn());
  }

  private turn(): void {
    this.scheduled = false;
    const started = performance.now();
    while (this.waiting.length > 0 && performance.now() - started < this.budgetMs) {
      const step = this.waiting.shift()!;
      try {
        step.resolve(step.work());
      } catch (err) {
        step.reject(err);
      }
    }
    if (this.waiting.length > 0) this.schedule();
  }
}
