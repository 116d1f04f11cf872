// A cgroup (v2) per run, where this daemon may make them: every process of the run is born in
// it and none leaves it by accident (setsid, a double fork, a killed wrapper), so the run's
// whole tree is found by reading it and ended at once by cgroup.kill (Linux 5.14+). Made inside
// the daemon's own cgroup (under systemd, Delegate=yes gives it one to manage); elsewhere, or
// on an older kernel, there is none and runs are found by their group and marker instead.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import { mkdir, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The prefix of every run cgroup, then a tag of the data dir, then the run id. */
export const RUN_CGROUP_PREFIX = 'gatehouse-run-';
const PREFIX = RUN_CGROUP_PREFIX;

/** The cgroup2 directory this process is in, or null (no cgroup2, or not found). */
function ownCgroupDir(): string | null {
  try {
    const line = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('0::'));
    if (!line) return null;
    const path = line.slice(3);
    for (const mount of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
      const [left, right] = mount.split(' - ');
      if (!right?.startsWith('cgroup2 ')) continue;
      const fields = left!.split(' ');
      const root = fields[3]!;
      const point = fields[4]!;
      // The part of our path below the mount's own root.
      if (path !== root && !path.startsWith(root === '/' ? '/' : `${root}/`)) continue;
      const rest = root === '/' ? path : path.slice(root.length);
      return join(point, rest);
    }
  } catch {
    // not Linux, or no /proc
  }
  return null;
}

/**
 * Where this daemon makes its runs' cgroups, or null: a cgroup2 directory of its own that it
 * can make a child in, with cgroup.kill (probed once, by making and removing one).
 */
export function runCgroupBase(): string | null {
  const base = ownCgroupDir();
  // The root cgroup has no cgroup.kill of its own; its children do, where the kernel has it.
  if (base === null) return null;
  const probe = join(base, `${PREFIX}probe-${process.pid}`);
  try {
    mkdirSync(probe);
    const usable = existsSync(join(probe, 'cgroup.kill'));
    rmdirSync(probe);
    return usable ? base : null;
  } catch {
    return null;
  }
}

/** The name of a run's cgroup in the base: the data dir's tag and the run's id. */
export function runCgroupName(tag: string, runId: string): string {
  return `${PREFIX}${tag}-${runId}`;
}

/**
 * The run's cgroup: made now; null when it cannot be (the run goes on without one). Off the
 * event loop: the kernel takes its cgroup lock for it, which other daemons' runs also hold.
 */
export async function makeRunCgroup(
  base: string,
  tag: string,
  runId: string,
): Promise<string | null> {
  const dir = join(base, runCgroupName(tag, runId));
  try {
    await mkdir(dir);
    return dir;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EEXIST' ? dir : null;
  }
}

/** A run's resource limits, as cgroup v2 files take them; null leaves one as it is. */
export interface CgroupLimits {
  memoryMax: number | null;
  pidsMax: number | null;
  cpuWeight: number | null;
}

/**
 * Writes the limits into a run's cgroup (memory.max, pids.max, cpu.weight); which could not be
 * written (a controller the parent does not delegate).
 */
export async function limitCgroup(dir: string, limits: CgroupLimits): Promise<string[]> {
  const files: [string, number | null][] = [
    ['memory.max', limits.memoryMax],
    ['pids.max', limits.pidsMax],
    ['cpu.weight', limits.cpuWeight],
  ];
  const failed: string[] = [];
  for (const [file, value] of files) {
    if (value === null) continue;
    try {
      await writeFile(join(dir, file), `${value}\n`);
    } catch {
      failed.push(file);
    }
  }
  return failed;
}

/** The pids in the cgroup now (every thread group's leader). */
export function cgroupPids(dir: string): number[] {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Whether any process is left in the cgroup (or below it). */
export function cgroupPopulated(dir: string): boolean {
  try {
    return /^populated 1$/m.test(readFileSync(join(dir, 'cgroup.events'), 'utf8'));
  } catch {
    return false;
  }
}

/**
 * Sends `signal` to every process in the cgroup, proven members: the cgroup is frozen while its
 * members are read and signalled (a frozen process cannot exit and hand its pid to another),
 * then thawed. SIGKILL goes through cgroup.kill, which takes the whole tree at once.
 */
export function signalCgroup(dir: string, signal: 'SIGTERM' | 'SIGKILL'): void {
  try {
    if (signal === 'SIGKILL') {
      writeFileSync(join(dir, 'cgroup.kill'), '1');
      return;
    }
    writeFileSync(join(dir, 'cgroup.freeze'), '1');
    try {
      for (const pid of cgroupPids(dir)) {
        try {
          process.kill(pid, signal);
        } catch {
          // ended by SIGKILL meanwhile
        }
      }
    } finally {
      writeFileSync(join(dir, 'cgroup.freeze'), '0');
    }
  } catch {
    // gone already
  }
}

/** Kills everything left in the cgroup (its whole tree at once), if anything is. */
export function killCgroup(dir: string): void {
  if (cgroupPopulated(dir)) signalCgroup(dir, 'SIGKILL');
}

/**
 * Removes the cgroup once it is empty; false while something is left in it. Off the event loop:
 * the kernel's removal waits for the cgroup to go offline, 2 to 3 ms each here, which on the
 * loop was the biggest share of a lifecycle's time on a shared board.
 */
export async function removeRunCgroup(dir: string): Promise<boolean> {
  try {
    await rmdir(dir);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** This data dir's run cgroups left from earlier daemons (`tag` as given to makeRunCgroup). */
export function runCgroupsOf(base: string, tag: string): string[] {
  try {
    return readdirSync(base)
      .filter((name) => name.startsWith(`${PREFIX}${tag}-`))
      .map((name) => join(base, name));
  } catch {
    return [];
  }
}
