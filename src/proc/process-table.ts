// One read of the process table, shared by every caller that asked for it before it began, with
// each process's stat and environment read at most once for all of them. Run endings that arrive
// together (a burst of exits, a thousand workers) cost one pass over /proc instead of one each,
// and a pass for the processes started since a run's leader reads the stat of those only (the
// others' /proc inode times, listed with them, prove them older).
import {
  listProcesses,
  readEnviron,
  readProcStat,
  startTimeMs,
  type ProcStat,
} from './proc-stat.js';
import { olderBefore } from './process-age.js';
import { nativeAddon } from './native-addon.js';

const LINUX = process.platform === 'linux';

export class ProcessTable {
  private readonly environs = new Map<number, string[] | null>();
  private readonly stats = new Map<number, ProcStat | null>();
  /**
   * `pids` as /proc listed them, with the times their /proc inodes last changed (null: gone by
   * then); or, without /proc, every process already read.
   */
  private constructor(
    private readonly pids: readonly number[],
    private readonly inodeTimes: ReadonlyMap<number, number | null>,
    private every: ProcStat[] | null,
  ) {}

  /**
   * Lists the table now, each process with its /proc inode's time, in one call to gatehouse's
   * native module (native/proc-scan.c); each process's stat is read when first asked for.
   */
  static read(): ProcessTable {
    if (!LINUX) return new ProcessTable([], new Map(), listProcesses());
    const listed = nativeAddon().procInodeTimes();
    const pids: number[] = [];
    const times = new Map<number, number | null>();
    for (let i = 0; i < listed.length; i += 2) {
      const pid = listed[i]!;
      const time = listed[i + 1]!;
      pids.push(pid);
      times.set(pid, Number.isNaN(time) ? null : time);
    }
    return new ProcessTable(pids, times, null);
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

  /**
   * The processes of the table that started at or after `startTime` (a Linux start time). Those
   * their /proc inodes prove older (process-age.ts) are not read; where that cannot be told (the
   * wall clock stepped), every one is.
   */
  since(startTime: number): readonly ProcStat[] {
    const before = this.every === null ? olderBefore(startTimeMs(startTime)) : null;
    if (before === null) return this.processes.filter((p) => p.startTime >= startTime);
    const found: ProcStat[] = [];
    for (const pid of this.pids) {
      if (!this.stats.has(pid) && (this.inodeTimes.get(pid) ?? Infinity) < before) continue;
      const stat = this.stat(pid);
      if (stat && stat.startTime >= startTime) found.push(stat);
    }
    return found;
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
