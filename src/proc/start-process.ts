// Starting a process in a session and process group of its own, stdin from /dev/null, stdout and
// stderr to one descriptor, and hearing once how it ended. On Linux by gatehouse's own starter
// (native/spawn.c): posix_spawn, which does not copy the daemon's memory as child_process's fork
// does (2 ms of the daemon's CPU a start, growing with its size, against 0.1 ms), and a pidfd
// the event loop polls. Elsewhere by child_process.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { NATIVE_PATH, nativeAddon, type NativeAddon } from './native-addon.js';

export interface ProcessEnd {
  /** Its exit status, or null when a signal ended it (or how is not known). */
  code: number | null;
  signal: NodeJS.Signals | null;
  /**
   * Reaped by the starter: until now its pid and group were not free for reuse. False when
   * something else reaped it (how it ended is then not known, and no longer proven anything).
   */
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

const LINUX = process.platform === 'linux';
let native: NativeAddon | null = null;

/** The starter cannot be used here: a build that did not make it, or a kernel that cannot watch. */
export class StarterUnusable extends Error {
  constructor(message: string, cause: unknown) {
    super(message, { cause });
    this.name = 'StarterUnusable';
  }
}

/**
 * Loads the starter now (where there is one) and checks that this kernel lets it watch a
 * process, so that either is said at start, not by every worker's start failing.
 */
export function loadStarter(): void {
  if (!LINUX || native) return;
  let loaded: NativeAddon;
  try {
    loaded = nativeAddon();
  } catch (err) {
    throw new StarterUnusable(
      `gatehouse's process starter (${NATIVE_PATH}) cannot be loaded (${codeOf(err)}): run npm ci, then npm run build`,
      err,
    );
  }
  try {
    loaded.probe();
  } catch (err) {
    throw new StarterUnusable(
      `workers cannot be supervised on this machine: ${(err as Error).message} (gatehouse needs Linux 5.3 or later, and pidfd_open allowed by any seccomp filter)`,
      err,
    );
  }
  native = loaded;
}

const codeOf = (err: unknown) =>
  (err as NodeJS.ErrnoException).code ?? (err as Error).message ?? String(err);

/** Each signal's name, the first of its aliases (SIGABRT, not SIGIOT), as child_process says. */
const SIGNAL_NAMES = new Map<number, NodeJS.Signals>();
for (const [name, n] of Object.entries(constants.signals))
  if (!SIGNAL_NAMES.has(n)) SIGNAL_NAMES.set(n, name as NodeJS.Signals);

/**
 * Starts `spec`; rejects (an error with the errno's code: ENOENT, EACCES) when nothing started.
 * `spec.output` may be closed as soon as this returns.
 */
export async function startProcess(spec: StartSpec): Promise<StartedProcess> {
  const argv = [spec.file, ...spec.args];
  const envp = Object.entries(spec.env).map(([name, value]) => `${name}=${value}`);
  // As child_process refuses them: C strings would end at the NUL, silently.
  if ([...argv, ...envp, spec.cwd].some((s) => s.includes('\0')))
    throw Object.assign(new Error('an argument or variable holds a NUL byte'), { code: 'EINVAL' });
  return LINUX ? startNative(spec, argv, envp) : startChild(spec);
}

/**
 * How a started process's end is heard: `tell` is called once with it, and a listener set
 * before or after that hears it once.
 */
function exitTeller() {
  let listener: ((end: ProcessEnd) => void) | null = null;
  let ended: ProcessEnd | null = null;
  return {
    onExit: (fn: (end: ProcessEnd) => void) => {
      if (ended) fn(ended);
      else listener = fn;
    },
    ignoreExit: () => {
      listener = null;
    },
    tell: (end: ProcessEnd) => {
      ended = end;
      const told = listener;
      listener = null;
      told?.(end);
    },
  };
}

/**
 * The spawn runs on a thread of libuv's pool (the event loop goes on while the child execs); its
 * exit is watched from the loop's turn the promise settles in, and reaped no earlier than the
 * next poll: until then its /proc entry is readable.
 */
function startNative(spec: StartSpec, argv: string[], envp: string[]): Promise<StartedProcess> {
  loadStarter();
  const { onExit, ignoreExit, tell } = exitTeller();
  const started = native!.start(
    spec.file,
    argv,
    envp,
    spec.cwd,
    spec.output,
    (code, signal, reaped) =>
      tell({
        code: code >= 0 ? code : null,
        signal: signal > 0 ? (SIGNAL_NAMES.get(signal) ?? null) : null,
        reaped,
      }),
  );
  return started.then((pid) => ({ pid, onExit, ignoreExit }));
}

function startChild(spec: StartSpec): StartedProcess {
  const child = spawn(spec.file, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    detached: true,
    stdio: ['ignore', spec.output, spec.output],
  });
  if (child.pid === undefined) {
    // The error comes as an event; this start failed either way.
    child.once('error', () => undefined);
    throw Object.assign(new Error(`${spec.file} could not be started (fork failed)`), {
      code: 'EAGAIN',
    });
  }
  child.unref();
  const { onExit, ignoreExit, tell } = exitTeller();
  child.once('exit', (code, signal) => tell({ code, signal, reaped: true }));
  return { pid: child.pid, onExit, ignoreExit };
}
