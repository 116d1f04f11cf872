// Process identity (pid + start time + boot id) and the one liveness test everything uses.
import { bootIdSeenBy, readBootId, readProcStat, type ProcStat } from './proc-stat.js';

export interface ProcessIdentity {
  pid: number;
  startTime: number;
  bootId: string;
}

let bootId: string | undefined;

/** The boot id, read once per process. */
export function currentBootId(): string {
  bootId ??= readBootId();
  return bootId;
}

export function isZombie(stat: ProcStat): boolean {
  return stat.state === 'Z' || stat.state === 'X';
}

/** The identity of a running (not zombie) process, or null. */
export function identityOf(pid: number): ProcessIdentity | null {
  const stat = readProcStat(pid);
  if (!stat || isZombie(stat)) return null;
  return { pid, startTime: stat.startTime, bootId: currentBootId() };
}

/**
 * True only if the pid exists, is not a zombie and, when an identity is given, is still that
 * process (same start time and boot). A recycled pid is dead to us.
 */
export function pidExists(pid: number, identity?: ProcessIdentity): boolean {
  const live = identityOf(pid);
  if (!live) return false;
  if (!identity) return true;
  if (sameIdentity(live, identity)) return true;
  // A process in another mount namespace may be shown another boot id: a container's own (as
  // systemd-nspawn gives it) beside a sandboxed unit's, which sees the machine's. The one the
  // process sees itself is the one it recorded.
  return live.startTime === identity.startTime && bootIdSeenBy(pid) === identity.bootId;
}

export function sameIdentity(a: ProcessIdentity, b: ProcessIdentity): boolean {
  return a.pid === b.pid && a.startTime === b.startTime && a.bootId === b.bootId;
}
