// Ordered, idempotent, bounded shutdown: every step runs even if one throws; a deadline ends it.
export interface ShutdownStep {
  name: string;
  run: () => unknown;
}

export interface ShutdownOptions {
  deadlineMs: number;
  log: (msg: string, err?: unknown) => void;
  /** Called once as the shutdown begins, before any step. */
  begin?: (reason: string) => void;
  /** Called once with the final exit code (the planned one, or 1 when the deadline was missed). */
  exit: (code: number) => void;
}

export class Shutdown {
  private readonly steps: ShutdownStep[] = [];
  private started: Promise<void> | null = null;

  constructor(private readonly opts: ShutdownOptions) {}

  get inProgress(): boolean {
    return this.started !== null;
  }

  /** Steps run in the order they were added. */
  add(name: string, run: () => unknown): void {
    this.steps.push({ name, run });
  }

  /** Starts the shutdown once; later calls return the same promise. */
  run(code: number, reason: string): Promise<void> {
    this.started ??= this.execute(code, reason);
    return this.started;
  }

  private async execute(code: number, reason: string): Promise<void> {
    this.opts.log(`shutting down: ${reason}`);
    this.opts.begin?.(reason);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.opts.deadlineMs);
      timer.unref();
    });
    const outcome = await Promise.race([this.runSteps().then(() => 'done' as const), deadline]);
    clearTimeout(timer);
    if (outcome === 'late')
      this.opts.log(`shutdown missed its ${this.opts.deadlineMs} ms deadline`);
    this.opts.exit(outcome === 'late' ? 1 : code);
  }

  private async runSteps(): Promise<void> {
    for (const step of this.steps) {
      try {
        await step.run();
      } catch (err) {
        this.opts.log(`shutdown step "${step.name}" failed`, err);
      }
    }
  }
}
