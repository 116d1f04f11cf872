// Ending a process or a whole process group: TERM, grace, KILL, wait; only what is proven ours.
import { identityOf, isZombie, pidExists, sameIdentity, type ProcessIdentity } from './identity.js';
import { listProcessGroup, readEnviron, type ProcStat } from './proc-stat.js';
import { waitUntil } from './wait.js';

export interface TerminateOptions {
  /** How long to wait after SIGTERM before SIGKILL. */
  graceMs: number;
  /** How long to wait after SIGKILL before reporting survivors. */
  killWaitMs: number;
}

export interface TerminateResult {
  /** Nothing we proved ours is alive any more (ended by TERM or KILL, or already gone). */
  terminated: boolean;
  /** SIGKILL was needed. */
  sigkill: boolean;
  /** Something is still alive after TERM and KILL. */
  survived: boolean;
  /** Pids that were alive when we began and are gone now. */
  ended: number[];
}

interface Target {
  alive(): number[];
  send(signal: NodeJS.Signals): void;
}

async function escalate(target: Target, opts: TerminateOptions): Promise<TerminateResult> {
  const before = target.alive();
  if (before.length === 0) return { terminated: true, sigkill: false, survived: false, ended: [] };
  target.send('SIGTERM');
  let sigkill = false;
  if (!(await waitUntil(() => target.alive().length === 0, opts.graceMs))) {
    sigkill = true;
    target.send('SIGKILL');
    await waitUntil(() => target.alive().length === 0, opts.killWaitMs);
  }
  const after = new Set(target.alive());
  return {
    terminated: after.size === 0,
    sigkill,
    survived: after.size > 0,
    ended: before.filter((pid) => !after.has(pid)),
  };
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    // ESRCH: it ended between our check and the signal, which is what we wanted.
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Terminates one process, and only while it is still the process `identity` names. */
export function terminateProcess(
  identity: ProcessIdentity,
  opts: TerminateOptions,
): Promise<TerminateResult> {
  return escalate(
    {
      alive: () => (pidExists(identity.pid, identity) ? [identity.pid] : []),
      send: (sig) => {
        if (pidExists(identity.pid, identity)) signal(identity.pid, sig);
      },
    },
    opts,
  );
}

/**
 * The live members of the group led by `leader` that are provably ours. While the leader lives
 * (same identity), its group id cannot be reused, so every member is ours. Once it is gone, a
 * member counts only if it carries `marker` (e.g. GATEHOUSE_RUN_ID=…) in its environment and
 * started after the leader in this boot; anything else is left alone.
 */
export function provenGroupMembers(leader: ProcessIdentity, marker: string | null): ProcStat[] {
  // One signal-0 probe answers "is anyone left in the group?" without scanning /proc.
  if (!groupExists(leader.pid)) return [];
  const live = listProcessGroup(leader.pid).filter((p) => !isZombie(p));
  if (leaderHoldsGroup(leader)) return live;
  if (marker === null) return [];
  return live.filter(
    (p) =>
      p.startTime >= leader.startTime &&
      identityOf(p.pid)?.bootId === leader.bootId &&
      (readEnviron(p.pid)?.includes(marker) ?? false),
  );
}

/** Signal 0 sends nothing: it only asks the kernel whether the group has any member. */
function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

function leaderHoldsGroup(leader: ProcessIdentity): boolean {
  const live = identityOf(leader.pid);
  return live !== null && sameIdentity(live, leader);
}

/**
 * Terminates the whole process group led by `leader`: the group is signalled as one while the
 * leader is proven alive; after that, each proven member is signalled by pid after re-checking
 * its identity.
 */
export function terminateGroup(
  leader: ProcessIdentity,
  marker: string | null,
  opts: TerminateOptions,
): Promise<TerminateResult> {
  return escalate(
    {
      alive: () => provenGroupMembers(leader, marker).map((p) => p.pid),
      send: (sig) => {
        if (leaderHoldsGroup(leader)) {
          signal(-leader.pid, sig);
          return;
        }
        for (const member of provenGroupMembers(leader, marker)) {
          const still = identityOf(member.pid);
          if (still && still.startTime === member.startTime) signal(member.pid, sig);
        }
      },
    },
    opts,
  );
}
