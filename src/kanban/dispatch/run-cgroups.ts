// The cgroups of this data dir's runs (src/proc/cgroup.ts), on a shared board and for profiles
// with limits: one made before each spawn (with the profile's limits), the wrapper moving itself
// in before it starts the worker, so the fence keeper ends the run's whole tree at once; removed
// once the run has ended and nothing is left in it.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import {
  killCgroup,
  limitCgroup,
  type CgroupLimits,
  makeRunCgroup,
  removeRunCgroup,
  runCgroupBase,
  runCgroupName,
  runCgroupsOf,
} from '../../proc/cgroup.js';

export class RunCgroups {
  /** Where they are made, or null where cgroups cannot be (runs are found by group and marker). */
  readonly base: string | null;
  private readonly tag: string;
  /** Ended runs whose cgroup still holds something (a kept descendant): tried again each tick. */
  private readonly leftover = new Set<string>();
  /** Removals release() started and has not finished. */
  private readonly removals = new Set<Promise<void>>();

  /** The controllers the base gives its children (a limit needs its own: memory, pids, cpu). */
  readonly controllers: ReadonlySet<string>;

  constructor(dataDir: string) {
    this.base = runCgroupBase();
    this.controllers = new Set(
      this.base === null ? [] : readText(join(this.base, 'cgroup.subtree_control')).split(/\s+/),
    );
    let dir = dataDir;
    try {
      dir = realpathSync(dataDir);
    } catch {
      // not made yet: its own name
    }
    // Several daemons (and data dirs) share one machine's cgroup tree.
    this.tag = createHash('sha256').update(dir).digest('hex').slice(0, 10);
  }

  /** The cgroup an earlier daemon made for a run it started (adoption), or null. */
  of(runId: string): string | null {
    if (this.base === null) return null;
    const dir = join(this.base, runCgroupName(this.tag, runId));
    return existsSync(dir) ? dir : null;
  }

  /**
   * Made now for a run about to start, with its profile's limits (docs/sandbox.md); null without
   * cgroups. A limit the cgroup would not take is said by `onRefused`.
   */
  async make(
    runId: string,
    limits: CgroupLimits | null = null,
    onRefused: (files: string[]) => void = () => undefined,
  ): Promise<string | null> {
    if (this.base === null) return null;
    const dir = await makeRunCgroup(this.base, this.tag, runId);
    if (dir && limits) {
      const refused = await limitCgroup(dir, limits);
      if (refused.length > 0) onRefused(refused);
    }
    return dir;
  }

  /**
   * The run has ended and its ending has done what it does with leftovers: whatever is still
   * in its cgroup evaded that (a process that left its group and dropped the run's marker) and
   * is killed, unless the profile keeps its descendants; the cgroup goes once empty.
   */
  async ended(cgroup: string | null, keepDescendants: boolean): Promise<void> {
    if (cgroup === null) return;
    if (!keepDescendants) killCgroup(cgroup);
    if (!(await removeRunCgroup(cgroup))) this.leftover.add(cgroup);
  }

  /** ended(), not waited for: the caller goes on; released() waits for every one. */
  release(cgroup: string | null, keepDescendants: boolean): void {
    if (cgroup === null) return;
    const removal = this.ended(cgroup, keepDescendants).finally(() =>
      this.removals.delete(removal),
    );
    this.removals.add(removal);
  }

  /** Every release() under way has removed its cgroup (or kept it for the sweep). */
  async released(): Promise<void> {
    await Promise.all(this.removals);
  }

  /** Removes the cgroups of ended runs that have emptied since (each tick). */
  async sweep(): Promise<void> {
    for (const dir of [...this.leftover]) if (await removeRunCgroup(dir)) this.leftover.delete(dir);
  }

  /**
   * At start: the empty cgroups earlier daemons of this data dir left (stopped mid-run) go; one
   * still holding a process is an adopted run's, removed when that run ends.
   */
  async sweepEarlier(): Promise<void> {
    if (this.base !== null)
      for (const dir of runCgroupsOf(this.base, this.tag)) await removeRunCgroup(dir);
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
