// Hosts on one machine: network namespaces joined to this one by veth pairs (addresses only
// inside namespaces the test made, removed with them), and workers found in the process table.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

export interface NamespaceHost {
  ns: string;
  address: string;
  gateway: string;
  /** Cuts the host off everything outside its namespace (its link down). */
  cut(): void;
  mend(): void;
  remove(): void;
}

/** A namespace joined to this one by a veth pair: 10.213.N.1 here, 10.213.N.2 inside. */
export function namespaceHost(tag: string, n: number): NamespaceHost {
  const ns = `gh-${tag}-${n}`;
  const outer = `gh${tag}${n}o`;
  const inner = `gh${tag}${n}i`;
  ip('netns', 'add', ns);
  ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner);
  ip('link', 'set', inner, 'netns', ns);
  ip('addr', 'add', `10.213.${n}.1/30`, 'dev', outer);
  ip('link', 'set', outer, 'up');
  ip('netns', 'exec', ns, 'ip', 'addr', 'add', `10.213.${n}.2/30`, 'dev', inner);
  ip('netns', 'exec', ns, 'ip', 'link', 'set', inner, 'up');
  ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
  return {
    ns,
    address: `10.213.${n}.2`,
    gateway: `10.213.${n}.1`,
    cut: () => ip('link', 'set', outer, 'down'),
    mend: () => ip('link', 'set', outer, 'up'),
    // Deleting the namespace deletes the pair.
    remove: () => ip('netns', 'delete', ns),
  };
}

export interface LiveWorker {
  pid: number;
  /** Field 22 of /proc/<pid>/stat: with the pid, which process this is. */
  startTime: string;
  taskId: string;
  runId: string;
  runDir: string;
}

/** Every live (not zombie) process that carries a worker's environment. */
export function liveWorkers(): LiveWorker[] {
  const found: LiveWorker[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue;
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      const value = (name: string) =>
        env.find((v) => v.startsWith(`${name}=`))?.slice(name.length + 1);
      const taskId = value('GATEHOUSE_TASK_ID');
      const runId = value('GATEHOUSE_RUN_ID');
      if (!taskId || !runId) continue;
      found.push({
        pid: Number(entry),
        startTime: fields[19]!,
        taskId,
        runId,
        runDir: value('GATEHOUSE_RUN_DIR') ?? '',
      });
    } catch {
      // gone meanwhile, or not readable
    }
  }
  return found;
}

/** The run ids of live processes that carry `taskId`'s worker environment. */
export function liveRunsOf(taskId: string): Set<string> {
  return new Set(
    liveWorkers()
      .filter((w) => w.taskId === taskId)
      .map((w) => w.runId),
  );
}
