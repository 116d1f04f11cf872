// Failures that repeat on a timer (a full disk fails every tick) are logged once in full, then
// once a window with how often they happened meanwhile, so the journal is not flooded with
// stacks. Imports nothing of ours: any subsystem may use it.

type Write = (obj: object, msg: string) => void;

interface Seen {
  /** When this failure was last written. */
  loggedAt: number;
  /** Occurrences since then, not written. */
  quiet: number;
}

export class RepeatLimiter {
  private readonly seen = new Map<string, Seen>();

  /**
   * `windowMs`: at most one line per failure per window (default a minute); `maxKinds`:
   * distinct failures remembered (the oldest forgotten first).
   */
  constructor(
    private readonly windowMs = 60_000,
    /** How long since a failure was written: this process's own time, which never steps. */
    private readonly clock: () => number = () => performance.now(),
    private readonly maxKinds = 200,
  ) {}

  /** Writes `msg` with `err` if this failure is new or its window has passed; counts it otherwise. */
  report(write: Write, err: unknown, msg: string): void {
    const error = describe(err);
    const key = `${msg}\u0000${error}`;
    const now = this.clock();
    const seen = this.seen.get(key);
    if (!seen) {
      if (this.seen.size >= this.maxKinds) this.seen.delete(this.seen.keys().next().value!);
      this.seen.set(key, { loggedAt: now, quiet: 0 });
      write({ err }, msg);
      return;
    }
    if (now - seen.loggedAt < this.windowMs) {
      seen.quiet++;
      return;
    }
    // Again after a window: the message and the count, not another stack.
    write({ error, repeated: seen.quiet + 1 }, `${msg} (again, ${seen.quiet + 1} times since)`);
    seen.loggedAt = now;
    seen.quiet = 0;
  }
}

function describe(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return `${typeof code === 'string' ? `${code}: ` : ''}${message.slice(0, 300)}`;
}
