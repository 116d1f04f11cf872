// Talking to systemd under Type=notify: the start held open (EXTEND_TIMEOUT_USEC, with STATUS=
// saying what it waits for) while the daemon starts, READY=1 once it serves, WATCHDOG=1 while
// the event loop turns, STOPPING=1 at shutdown. Node cannot send a unix datagram, so each notice
// is a `systemd-notify` child (the unit sets NotifyAccess=all), one at a time so that they arrive
// in order; systemd-notify (246 or later) waits until systemd has read the notice, so none is
// lost to the sender exiting first. Outside systemd (no NOTIFY_SOCKET) every call does nothing.
import { spawn } from 'node:child_process';

export interface ServiceManager {
  /** Serving: the start is over (systemctl start returns) and the watchdog pings begin. */
  ready(status: string): void;
  /** What the start waits for now (the crash-loop guard, the board database…). */
  waiting(status: string): void;
  stopping(status: string): void;
  /** Stops the timers (the process is about to exit). */
  close(): void;
}

const NONE: ServiceManager = {
  ready: () => undefined,
  waiting: () => undefined,
  stopping: () => undefined,
  close: () => undefined,
};

/** How far ahead each extension of the start reaches; renewed every third of it. */
const HOLD_MS = 60_000;
/**
 * The longest a start is held open. Past it the daemon says it has started (its port answers,
 * /ready says what it still waits for), so that boot and `systemctl start` do not wait forever
 * on a database that is down.
 */
const HOLD_LIMIT_MS = 5 * 60_000;

/**
 * The service manager this process runs under, read from `env`: a no-op outside systemd. The
 * start is held open from now until ready() (or HOLD_LIMIT_MS). `warn` hears once that
 * systemd-notify could not be run.
 */
export function serviceManager(
  env: NodeJS.ProcessEnv,
  warn: (msg: string) => void,
  program = 'systemd-notify',
): ServiceManager {
  if (!env.NOTIFY_SOCKET) return NONE;
  const childEnv = { NOTIFY_SOCKET: env.NOTIFY_SOCKET, PATH: env.PATH ?? '/usr/bin:/bin' };
  let warned = false;
  const fail = (err: Error) => {
    if (warned) return;
    warned = true;
    warn(`cannot tell systemd (${program}: ${err.message}); Type=notify needs systemd-notify`);
  };
  // One notice at a time: a later one never overtakes an earlier one.
  let queue = Promise.resolve();
  const send = (...assignments: string[]) => {
    queue = queue.then(
      () =>
        new Promise<void>((resolve) => {
          try {
            const child = spawn(program, assignments, { stdio: 'ignore', env: childEnv });
            child.once('error', (err) => {
              fail(err);
              resolve();
            });
            child.once('exit', () => resolve());
            child.unref();
          } catch (err) {
            fail(err as Error);
            resolve();
          }
        }),
    );
  };
  const watchdogMs = watchdogInterval(env);
  const started = performance.now();
  let why = 'starting';
  let phase: 'starting' | 'ready' | 'stopping' = 'starting';
  let pings: NodeJS.Timeout | undefined;
  const hold = setInterval(() => {
    if (performance.now() - started < HOLD_LIMIT_MS) extend();
    else ready(`started, still waiting: ${why}`);
  }, HOLD_MS / 3);
  hold.unref();
  const extend = () => send(`EXTEND_TIMEOUT_USEC=${HOLD_MS * 1000}`, status(why));
  const ready = (text: string) => {
    if (phase === 'stopping') return;
    clearInterval(hold);
    send('READY=1', status(text));
    phase = 'ready';
    if (watchdogMs === null || pings) return;
    // Half the timeout, as sd_watchdog_enabled(3) advises: one late ping is not a restart.
    pings = setInterval(() => send('WATCHDOG=1'), watchdogMs / 2);
    pings.unref();
  };
  extend();
  return {
    ready,
    waiting(text) {
      why = text;
      if (phase === 'starting') extend();
      else send(status(text));
    },
    stopping(text) {
      phase = 'stopping';
      clearInterval(pings);
      clearInterval(hold);
      send('STOPPING=1', status(text));
    },
    close() {
      clearInterval(pings);
      clearInterval(hold);
    },
  };
}

/** A STATUS= line: systemd reads a notice line by line, so a line break would end it. */
function status(text: string): string {
  return `STATUS=${text.replace(/[\r\n]+/g, ' ')}`;
}

/** The watchdog's timeout in ms when it is meant for this process, else null. */
function watchdogInterval(env: NodeJS.ProcessEnv): number | null {
  const usec = Number(env.WATCHDOG_USEC);
  if (!Number.isSafeInteger(usec) || usec <= 0) return null;
  if (env.WATCHDOG_PID && Number(env.WATCHDOG_PID) !== process.pid) return null;
  return usec / 1000;
}
