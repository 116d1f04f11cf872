// CPU and memory of processes where there is no /proc (macOS): pidusage, which asks ps and keeps
// each pid's previous reading to turn CPU time into a percentage. Loaded on first use: on Linux
// it is never needed, and loading it (it loads child_process) was 11 ms of every cold start.
// Required, not imported: the daemon's bundle leaves it out and runs as CommonJS.
import { createRequire } from 'node:module';
import type pidusage from 'pidusage';

let loaded: typeof pidusage | null = null;
const pidusageModule = () =>
  (loaded ??= createRequire(import.meta.url)('pidusage') as typeof pidusage);

export interface Usage {
  /** Percent of one core since the previous reading (the first: since the process started). */
  cpuPercent: number;
  rssBytes: number;
}

/** Usage of each pid that still exists; pids that are gone are left out. */
export async function processUsage(pids: readonly number[]): Promise<Map<number, Usage>> {
  const out = new Map<number, Usage>();
  if (pids.length === 0) return out;
  const pidusage = pidusageModule();
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
