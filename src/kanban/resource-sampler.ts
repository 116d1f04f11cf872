// CPU and memory of live workers' process groups, sampled each tick with pidusage.
import pidusage from 'pidusage';
import { isZombie, listProcesses } from '../proc/index.js';

export interface GroupSample {
  cpuPercent: number;
  rssBytes: number;
}

/**
 * Samples every group in `pgids` (all members, one /proc pass). pidusage keeps an open file per
 * sampled pid; `maxAgeMs` makes it close the files of pids not sampled again within that time.
 */
export async function sampleGroups(
  pgids: readonly number[],
  maxAgeMs: number,
): Promise<Map<number, GroupSample>> {
  const wanted = new Set(pgids);
  const members = new Map<number, number[]>();
  for (const p of listProcesses()) {
    if (!wanted.has(p.pgid) || isZombie(p)) continue;
    members.set(p.pgid, [...(members.get(p.pgid) ?? []), p.pid]);
  }
  const out = new Map<number, GroupSample>();
  await Promise.all(
    [...members].map(async ([pgid, pids]) => {
      const stats = await Promise.all(
        pids.map((pid) => pidusage(pid, { maxage: maxAgeMs }).catch(() => null)),
      );
      const live = stats.filter((s) => s !== null);
      if (live.length === 0) return;
      out.set(pgid, {
        cpuPercent: live.reduce((sum, s) => sum + s.cpu, 0),
        rssBytes: live.reduce((sum, s) => sum + s.memory, 0),
      });
    }),
  );
  return out;
}

/** Closes every file pidusage holds (on dispatcher stop). */
export function releaseSamplers(): void {
  pidusage.clear();
}
