// Starting a process in a session and process group of its own, stdin from /dev/null, stdout and
// stderr to one descriptor, and hearing once how it ended: Node's child_process, on every
// platform. Its end is heard once Node has reaped it: until then its pid and group are not free
// for reuse, so what the daemon signals before it is still the process it started.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, readdirSync, readFileSync } from 'node:fs';

export interface ProcessEnd {
  /** Its exit status, or null when a signal ended it. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Reaped by the starter: until now its pid and group were not free for reuse. */
  reaped: boolean;
}

export interface StartedProcess {
  readonly pid: number;
  /** `listener` is told once how it ended (a later call replaces the listener). */
  onExit(listener: (end: ProcessEnd) => void): void;
  /** Its end is no longer told to anyone (it is still reaped). */
  ignoreExit(): void;
}

export interface StartSpec {
  /** An absolute path: no PATH lookup. */
  file: string;
  /** Its arguments after its own name. */
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd: string;
  /** An open descriptor its stdout and stderr go to (the caller closes its own). */
  output: number;
}

/**
 * Starts `spec`; rejects (an error with the errno's code: ENOENT, EACCES) when nothing started.
 * `spec.output` may be closed as soon as this returns.
 */
export async function startProcess(spec: StartSpec): Promise<StartedProcess> {
  // As child_process refuses them, but said with the code the caller reads.
  if (
    [spec.file, ...spec.args, ...Object.entries(spec.env).flat(), spec.cwd].some((s) =>
      s.includes('\0'),
    )
  )
    throw Object.assign(new Error('an argument or variable holds a NUL byte'), { code: 'EINVAL' });
  closeInherited();
  const child = spawn(spec.file, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    detached: true,
    stdio: ['ignore', spec.output, spec.output],
  });
  if (child.pid === undefined) {
    // Nothing started: its error (with the errno's code) comes as an event.
    const err = await new Promise<NodeJS.ErrnoException>((resolve) => child.once('error', resolve));
    // Node names the program whichever of it and the directory is missing.
    if (err.code === 'ENOENT' && !existsSync(spec.cwd))
      err.message = `cannot start ${spec.file}: its directory ${spec.cwd} does not exist`;
    throw err;
  }
  child.unref();
  let listener: ((end: ProcessEnd) => void) | null = null;
  let ended: ProcessEnd | null = null;
  child.once('exit', (code, signal) => {
    ended = { code, signal, reaped: true };
    const told = listener;
    listener = null;
    told?.(ended);
  });
  return {
    pid: child.pid,
    onExit: (fn) => {
      if (ended) fn(ended);
      else listener = fn;
    },
    ignoreExit: () => {
      listener = null;
    },
  };
}

const O_CLOEXEC = 0o2000000;
let inheritedClosed = false;

/**
 * Closes, before the first start, each descriptor above stderr that this process holds without
 * close-on-exec: Node opens none such but its IPC channel (kept), so they were inherited from
 * whoever started the daemon
 * (a pipe of a shell or a CI runner), and a worker would inherit them in turn. Where /proc
 * cannot tell, nothing is closed.
 */
function closeInherited(): void {
  if (inheritedClosed) return;
  inheritedClosed = true;
  let names: string[];
  try {
    names = readdirSync('/proc/self/fdinfo');
  } catch {
    return;
  }
  // A daemon forked with an IPC channel (a process manager's fork mode) keeps it.
  const channel = (process.channel as { fd?: number } | undefined)?.fd;
  for (const name of names) {
    const fd = Number(name);
    if (!(fd > 2) || fd === channel) continue;
    try {
      const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
      if (flags && (parseInt(flags[1]!, 8) & O_CLOEXEC) === 0) closeSync(fd);
    } catch {
      // Closed meanwhile (the listing's own descriptor among them).
    }
  }
}
