// Once per `npm test`: every process the suite starts (daemons, workers, their children) carries
// one mark in its environment; at the end, any still alive fails the run, after being ended.
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  RUN_CGROUP_PREFIX,
  cgroupPids,
  removeRunCgroup,
  runCgroupBase,
} from '../src/proc/cgroup.js';
import { identityOf, readCmdline, readEnviron, terminateProcess } from '../src/proc/index.js';

const NAME = 'GH_TEST_SUITE';

function marked(mark: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)
    .map(Number)
    .filter((pid) => identityOf(pid) !== null && (readEnviron(pid)?.includes(mark) ?? false));
}

/**
 * Removes the runs' cgroups left empty; returns those still holding a process (one that cleared
 * its environment, which the mark check cannot see). Nothing in them is signalled here.
 */
async function removeRunCgroups(): Promise<string[]> {
  const base = runCgroupBase();
  if (base === null) return [];
  const held: string[] = [];
  for (const name of readdirSync(base))
    if (name.startsWith(RUN_CGROUP_PREFIX) && !(await removeRunCgroup(join(base, name))))
      held.push(`${name}: ${cgroupPids(join(base, name)).join(' ')}`);
  return held;
}

export default function setup(): () => Promise<void> {
  const mark = `${NAME}=${randomUUID()}`;
  process.env[NAME] = mark.slice(NAME.length + 1);
  // Runs' cgroups (src/proc/cgroup.ts) that daemons stopped mid-run could not remove: empty once
  // every process is gone, removed at the very end.
  return async () => {
    try {
      await judge(mark);
    } finally {
      const held = await removeRunCgroups();
      if (held.length > 0) {
        process.exitCode = 1;
        throw new Error(`the suite left run cgroups holding processes:\n${held.join('\n')}`);
      }
    }
  };
}

async function judge(mark: string): Promise<void> {
  // Test files end what they start; give orphans a moment to be reaped before judging.
  const deadline = Date.now() + 5000;
  let left = marked(mark);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = marked(mark);
  }
  if (left.length === 0) return;
  const named = left.map((pid) => `${pid} ${(readCmdline(pid) ?? []).join(' ').slice(0, 120)}`);
  for (const pid of left) {
    const identity = identityOf(pid);
    if (identity) await terminateProcess(identity, { graceMs: 1000, killWaitMs: 2000 });
  }
  // vitest reports an error thrown here but still exits 0: set the exit code ourselves.
  process.exitCode = 1;
  throw new Error(
    `the suite left ${left.length} process(es) running (now ended):\n${named.join('\n')}`,
  );
}
