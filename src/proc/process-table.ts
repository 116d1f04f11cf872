// One read of the process table, shared by every caller that asked for it before it began, with
// each process's stat and environment read at most once for all of them. Run endings that arrive
// together (a burst of exits, a thousand workers) cost one pass over /proc instead of one each.
import { listProcesses, procPids, readEnviron, readProcStat, type ProcStat } from './proc-stat.js';

import { LINUX } from './platform.js';

export class ProcessTable {
  private readonly environs = new Map<number, string[] | null>();
  private readonly stats = new Map<number, ProcStat | null>();
  /** `pids` as /proc listed them; or, without /proc, every process already read. */
  private constructor(
    private readonly pids: readonly number[],
    private every: ProcStat[] | null,
  ) {}

  /** Lists the table now; each process's stat is read when first asked for. */
  static read(): ProcessTable {
    return LINUX ? new ProcessTable(procPids(), null) : new ProcessTable([], listProcesses());
  }

  private stat(pid: number): ProcStat | null {
    if (!this.stats.has(pid)) this.stats.set(pid, readProcStat(pid));
    return this.stats.get(pid) ?? null;
  }

  /** Every process in the table. */
  get processes(): readonly ProcStat[] {
    this.every ??= this.pids.map((pid) => this.stat(pid)).filter((p) => p !== null);
    return this.every;
  }

  /** The processes of the table that started at or after `startTime` (a Linux start time). */
  since(startTime: number): readonly ProcStat[] {
    return this.processes.filter((p) => p.startTime >= startTime);
  }

  /** The process's environment as the table's readers first asked for it, or null. */
  environ(pid: number): string[] | null {
    if (!this.environs.has(pid)) this.environs.set(pid, readEnviron(pid));
    return this.environs.get(pid) ?? null;
  }
}

let next: Promise<ProcessTable> | null = null;

/**
 * A read of the table that begins after this call: it runs on the next turn of the event loop,
 * and everyone who asks until then gets the same one.
 */
export function freshProcessTable(): Promise<ProcessTable> {
  next ??= new Promise((resolve) => setImmediate(resolve)).then(() => {
    next = null;
    return ProcessTable.read();
  });
  return next;
}
