// Ending a process or everything of a run: TERM, grace, KILL, wait; only what is proven ours.
import {
  currentBootId,
  identityOf,
  isZombie,
  pidExists,
  sameIdentity,
  type ProcessIdentity,
} from './identity.js';
import { startTimeNow, type ProcStat } from './proc-stat.js';
import { ProcessTable, freshProcessTable } from './process-table.js';
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
  /** Pids still alive at the end. */
  survivors: number[];
}

interface Target {
  alive(): Promise<number[]>;
  send(signal: NodeJS.Signals): void;
  /** The first gap between checks, doubling to 20 ms: 1 where a check is one file read. */
  firstPollMs?: number;
}

async function escalate(target: Target, opts: TerminateOptions): Promise<TerminateResult> {
  const before = await target.alive();
  if (before.length === 0)
    return { terminated: true, sigkill: false, survived: false, ended: [], survivors: [] };
  target.send('SIGTERM');
  let sigkill = false;
  const gone = async () => (await target.alive()).length === 0;
  if (!(await waitUntil(gone, opts.graceMs, 20, target.firstPollMs))) {
    sigkill = true;
    target.send('SIGKILL');
    await waitUntil(gone, opts.killWaitMs, 20, target.firstPollMs);
  }
  const survivors = await target.alive();
  const after = new Set(survivors);
  return {
    terminated: after.size === 0,
    sigkill,
    survived: after.size > 0,
    ended: before.filter((pid) => !after.has(pid)),
    survivors,
  };
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    // ESRCH: it ended between our check and the signal, which is what we wanted. EPERM: it is
    // ours but not ours to signal (a setuid child): it stays alive and is reported a survivor.
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ESRCH' && code !== 'EPERM') throw err;
  }
}

/** Terminates one process, and only while it is still the process `identity` names. */
export function terminateProcess(
  identity: ProcessIdentity,
  opts: TerminateOptions,
): Promise<TerminateResult> {
  return escalate(
    {
      alive: () => Promise.resolve(pidExists(identity.pid, identity) ? [identity.pid] : []),
      send: (sig) => {
        if (pidExists(identity.pid, identity)) signal(identity.pid, sig);
      },
      // A daemon told to stop is gone within about 10 ms: a takeover should not wait 20 more.
      firstPollMs: 1,
    },
    opts,
  );
}

/** How a run's processes are recognised once its leader is gone. */
export interface RunProof {
  /** An environment entry every process of the run inherits (GATEHOUSE_RUN_ID=…), or null. */
  marker: string | null;
  /**
   * A start time (the unit of ProcStat.startTime) by which the group was still the run's:
   * a group cannot be reused while it has members, so a member that started by then is ours.
   */
  groupHeldUntil: number | null;
}

/**
 * Everything alive that is provably the run's: while the leader lives (same identity) every
 * member of its group; after that, members that started while the group was still ours; and,
 * anywhere on the machine, processes that started after the leader in this boot and carry the
 * run's marker (background jobs that called setsid). A run whose leader is not known has the
 * groups its marked session leaders lead (see groupsLedByMarked). Anything else is left alone.
 */
function provenRunProcesses(
  leader: ProcessIdentity,
  proof: RunProof,
  table: ProcessTable,
): ProcStat[] {
  const holds = leaderHoldsGroup(leader);
  const sameBoot = currentBootId() === leader.bootId;
  const found: ProcStat[] = [];
  // Whatever is provably the run's started no earlier than its leader (its group's members too:
  // only the leader's descendants are in its session): the older ones are not read at all.
  const candidates = sameBoot ? table.since(leader.startTime) : table.processes;
  const led = leader.pid === 0 ? groupsLedByMarked(candidates, proof.marker, table) : null;
  for (const p of candidates) {
    if (isZombie(p)) continue;
    if ((p.pgid === leader.pid && holds) || led?.has(p.pgid)) {
      found.push(p);
      continue;
    }
    if (!sameBoot || p.startTime < leader.startTime || p.pid === process.pid) continue;
    const early = proof.groupHeldUntil !== null && p.startTime <= proof.groupHeldUntil;
    if (p.pgid === leader.pid && early) found.push(p);
    else if (proof.marker !== null && (table.environ(p.pid)?.includes(proof.marker) ?? false))
      found.push(p);
  }
  return found;
}

/**
 * For a run whose leader is not known (its spawn not recorded yet, or never): the groups led by
 * live session leaders that carry its marker (its wrapper, a worker that called setsid). Their
 * members are the run's, those without the marker too (a child started with `env -i`): a
 * session's groups hold only that session's processes, and a live leader keeps its group from
 * being reused.
 */
function groupsLedByMarked(
  processes: readonly ProcStat[],
  marker: string | null,
  table: ProcessTable,
): Set<number> {
  const led = new Set<number>();
  if (marker === null) return led;
  for (const p of processes)
    if (
      !isZombie(p) &&
      p.pid === p.pgid &&
      p.pid === p.sid &&
      p.pid !== process.pid &&
      (table.environ(p.pid)?.includes(marker) ?? false)
    )
      led.add(p.pid);
  return led;
}

function leaderHoldsGroup(leader: ProcessIdentity): boolean {
  const live = identityOf(leader.pid);
  return live !== null && sameIdentity(live, leader);
}

/**
 * Terminates everything of a run (see provenRunProcesses): the group is signalled as one while
 * its leader is proven alive, and every other proven process (outside that group, or all of
 * them once the leader is gone) by pid after re-checking its start time. While the leader is
 * seen alive the group is proven the run's up to that moment, so members without the marker
 * stay proven after the leader dies mid-way.
 */
export function terminateRun(
  leader: ProcessIdentity,
  proof: RunProof,
  opts: TerminateOptions,
): Promise<TerminateResult> {
  let held = proof.groupHeldUntil;
  const current = (): RunProof => {
    if (leaderHoldsGroup(leader)) held = startTimeNow();
    return { marker: proof.marker, groupHeldUntil: held };
  };
  return escalate(
    {
      // Whether anything is left: from a table read shared with the endings that asked at the
      // same time. What to signal: from a table read right before the signal.
      alive: async () => {
        const table = await freshProcessTable();
        return provenRunProcesses(leader, current(), table).map((p) => p.pid);
      },
      send: (sig) => {
        const asGroup = leaderHoldsGroup(leader);
        if (asGroup) signal(-leader.pid, sig);
        for (const member of provenRunProcesses(leader, current(), ProcessTable.read())) {
          if (asGroup && member.pgid === leader.pid) continue;
          const still = identityOf(member.pid);
          if (still && still.startTime === member.startTime) signal(member.pid, sig);
        }
      },
    },
    opts,
  );
}

/** The environment entry every process of a run carries: proof it is ours once its leader is gone. */
export function runMarker(runId: string): string {
  return `GATEHOUSE_RUN_ID=${runId}`;
}

/**
 * Terminates everything of run `runId` (terminateRun): its group while `leader` is proven alive,
 * and anywhere the processes carrying its marker. A run whose leader was never recorded is ended
 * by its marker alone: only processes carrying its own random run id.
 */
export function terminateMarkedRun(
  runId: string,
  leader: ProcessIdentity | null,
  groupHeldUntil: number | null,
  opts: TerminateOptions,
): Promise<TerminateResult> {
  const marker = runMarker(runId);
  if (!leader)
    return terminateRun(
      { pid: 0, startTime: 0, bootId: currentBootId() },
      { marker, groupHeldUntil: null },
      opts,
    );
  return terminateRun(leader, { marker, groupHeldUntil }, opts);
}
