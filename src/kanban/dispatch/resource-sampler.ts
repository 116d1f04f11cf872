// CPU and memory of live workers' process groups. On Linux from one snapshot of the process
// table per tick; elsewhere the snapshot (ps) says who is in which group and pidusage measures
// them.
import { isZombie, LINUX, processUsage, type ProcStat, type Usage } from '../../proc/index.js';

export interface GroupSample {
  cpuPercent: number;
  rssBytes: number;
}

export interface GroupSampler {
  /** Sums each group's live members; groups with no member are left out. */
  sample(
    snapshot: readonly ProcStat[],
    pgids: readonly number[],
    now: number,
  ): Promise<Map<number, GroupSample>>;
}

function members(snapshot: readonly ProcStat[], pgids: readonly number[]): ProcStat[] {
  const wanted = new Set(pgids);
  return snapshot.filter((p) => wanted.has(p.pgid) && !isZombie(p));
}

function sumByGroup(
  procs: readonly ProcStat[],
  usageOf: (p: ProcStat) => Usage | undefined,
): Map<number, GroupSample> {
  const out = new Map<number, GroupSample>();
  for (const p of procs) {
    const usage = usageOf(p);
    if (!usage) continue;
    const group = out.get(p.pgid) ?? { cpuPercent: 0, rssBytes: 0 };
    out.set(p.pgid, {
      cpuPercent: group.cpuPercent + usage.cpuPercent,
      rssBytes: group.rssBytes + usage.rssBytes,
    });
  }
  return out;
}

/**
 * From /proc snapshots: CPU percent is the CPU time a member used since the previous sample over
 * the wall time between them (100 = one core), so a new member counts from its own start.
 * Nothing is held open between samples; members that are gone are forgotten at once.
 */
export class SnapshotSampler implements GroupSampler {
  private previous = new Map<string, { cpuSeconds: number; at: number }>();

  sample(
    snapshot: readonly ProcStat[],
    pgids: readonly number[],
    now: number,
  ): Promise<Map<number, GroupSample>> {
    const seen = new Map<string, { cpuSeconds: number; at: number }>();
    const result = sumByGroup(members(snapshot, pgids), (p) => {
      const key = `${p.pid}:${p.startTime}`;
      const before = this.previous.get(key);
      const elapsed = before ? (now - before.at) / 1000 : 0;
      seen.set(key, { cpuSeconds: p.cpuSeconds, at: now });
      const cpuPercent =
        before && elapsed > 0 ? (100 * Math.max(0, p.cpuSeconds - before.cpuSeconds)) / elapsed : 0;
      return { cpuPercent, rssBytes: p.rssBytes };
    });
    this.previous = seen;
    return Promise.resolve(result);
  }
}

/** Where there is no /proc: the snapshot (ps) gives the members, pidusage their usage. */
export class PidusageSampler implements GroupSampler {
  async sample(
    snapshot: readonly ProcStat[],
    pgids: readonly number[],
  ): Promise<Map<number, GroupSample>> {
    const procs = members(snapshot, pgids);
    const usage = await processUsage(procs.map((p) => p.pid));
    return sumByGroup(procs, (p) => usage.get(p.pid));
  }
}

export function platformSampler(linux: boolean = LINUX): GroupSampler {
  return linux ? new SnapshotSampler() : new PidusageSampler();
}
