// One read of the process table, shared by every caller that asked for it before it began, with
// each process's environment read at most once for all of them. Run endings that arrive
// together (a burst of exits, a thousand workers) cost one pass over /proc instead of one each.
import { listProcesses, readEnviron, type ProcStat } from './proc-stat.js';

export class ProcessTable {
  private readonly environs = new Map<number, string[] | null>();

  constructor(readonly processes: readonly ProcStat[]) {}

  /** Reads the table now. */
  static read(): ProcessTable {
    return new ProcessTable(listProcesses());
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
