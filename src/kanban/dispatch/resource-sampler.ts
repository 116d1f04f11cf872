// CPU and memory of live workers' process groups, from the tick's one snapshot of the process table.
import { isZombie, type ProcStat } from '../../proc/index.js';

export interface GroupSample {
  cpuPercent: number;
  rssBytes: number;
}

/**
 * Sums each group's members. CPU percent is the CPU time a member used since the previous
 * sample over the wall time between them (100 = one core), so the first sample of a new member
 * counts from its own start. Nothing is held open between samples; members that are gone are
 * forgotten at once.
 */
export class ResourceSampler {
  private previous = new Map<string, { cpuSeconds: number; at: number }>();

  sample(
    snapshot: readonly ProcStat[],
    pgids: readonly number[],
    now: number,
  ): Map<number, GroupSample> {
    const wanted = new Set(pgids);
    const seen = new Map<string, { cpuSeconds: number; at: number }>();
    const out = new Map<number, GroupSample>();
    for (const p of snapshot) {
      if (!wanted.has(p.pgid) || isZombie(p)) continue;
      const key = `${p.pid}:${p.startTime}`;
      const before = this.previous.get(key);
      const elapsed = before ? (now - before.at) / 1000 : 0;
      const cpuPercent =
        before && elapsed > 0 ? (100 * Math.max(0, p.cpuSeconds - before.cpuSeconds)) / elapsed : 0;
      seen.set(key, { cpuSeconds: p.cpuSeconds, at: now });
      const group = out.get(p.pgid) ?? { cpuPercent: 0, rssBytes: 0 };
      out.set(p.pgid, {
        cpuPercent: group.cpuPercent + cpuPercent,
        rssBytes: group.rssBytes + p.rssBytes,
      });
    }
    this.previous = seen;
    return out;
  }
}
