// What a sandboxed run sees (docs/sandbox.md), built in one place: the host read-only, a private
// /tmp, its own pid namespace and no capability, then every path hidden, bound read-only or
// bound writable, in the order bubblewrap needs (a parent before what is mounted inside it).
import { existsSync } from 'node:fs';
import { sep } from 'node:path';

/** One mount of the view: a path hidden (an empty tmpfs), or a host path bound at `dest`. */
export type Mount =
  | { op: 'hide'; dest: string }
  | { op: 'read'; src: string; dest: string }
  | { op: 'write'; src: string; dest: string };

export interface SandboxView {
  network: 'host' | 'none';
  mounts: Mount[];
  /** Where the run starts. */
  cwd: string;
}

const depth = (path: string) => path.split(sep).filter(Boolean).length;
const ORDER: Record<Mount['op'], number> = { hide: 0, read: 1, write: 2 };

/** Whether `path` is `dir` or inside it. */
export function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
}

/**
 * bubblewrap's arguments for the view, up to (not including) `--` and the command. Mounts go
 * parents first: a path bound inside a hidden one is bound after the hiding tmpfs, so it shows.
 * A source that does not exist is skipped (a hidden path that is not there hides nothing).
 */
export function bwrapArgs(view: SandboxView): string[] {
  const args = [
    // The sandbox ends when the wrapper does (it is its parent, never the daemon, which a
    // restart leaves): a run's processes never outlive it.
    '--die-with-parent',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    ...(view.network === 'none' ? ['--unshare-net'] : []),
    // As root, bubblewrap keeps every capability unless told: with them a run could unmount
    // what hides a path. No new privileges is bubblewrap's own default.
    '--cap-drop',
    'ALL',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
    '--tmpfs',
    '/var/tmp',
  ];
  const mounts = [...view.mounts].sort(
    (a, b) => depth(a.dest) - depth(b.dest) || ORDER[a.op] - ORDER[b.op],
  );
  const seen = new Set<string>();
  const hidden: string[] = [];
  for (const m of mounts) {
    const key = `${m.op}\u0000${m.dest}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (m.op === 'hide') {
      if (!existsSync(m.dest)) continue;
      args.push('--tmpfs', m.dest);
      hidden.push(m.dest);
    } else if (existsSync(m.src)) {
      args.push(m.op === 'read' ? '--ro-bind' : '--bind', m.src, m.dest);
    }
  }
  // A hidden path reads as an empty directory that takes nothing: made read-only once what is
  // bound inside it has its mount point (a remount is of that one mount, not of those inside).
  for (const dest of hidden) args.push('--remount-ro', dest);
  args.push('--chdir', view.cwd);
  return args;
}
