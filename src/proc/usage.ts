// CPU and memory of processes where there is no /proc (macOS): pidusage, which asks ps and keeps
// each pid's previous reading to turn CPU time into a percentage. Required on first use, not
// imported: on Linux it is never needed, and loading it (with child_process) took 5 to 9 ms of
// every start; the daemon's bundle leaves it out and runs as CommonJS.
import { createRequire } from 'node:module';
import type pidusage from 'pidusage';

const load = createRequire(import.meta.url);

export interface Usage {
  /** Percent of one core since the previous reading (the first: since the process started). */
  cpuPercent: number;
  rssBytes: number;
}

/** Usage of each pid that still exists; pids that are gone are left out. */
export async function processUsage(pids: readonly number[]): Promise<Map<number, Usage>> {
  const out = new Map<number, Usage>();
  if (pids.length === 0) return out;
  const pidusage = load('pidusage') as typeof import('pidusage');
  let stats: Record<string, pidusage.Status | undefined>;
  try {
    stats = await pidusage([...pids]);
  } catch {
    // One pid ended between the listing and the reading: ask for each alone.
    stats = {};
    for (const pid of pids) stats[pid] = await pidusage(pid).catch(() => undefined);
  }
  for (const pid of pids) {
    const s = stats[pid];
    if (s) out.set(pid, { cpuPercent: s.cpu, rssBytes: s.memory });
  }
  return out;
}
