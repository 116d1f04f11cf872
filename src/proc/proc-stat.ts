// The kernel's facts about one process (state, parent, group, session, start time), from /proc or ps.
import { createRequire } from 'node:module';
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
} from 'node:fs';
import { endianness } from 'node:os';
import { uptimeSeconds } from './boot-clock.js';
import { LINUX } from './platform.js';

/**
 * A command's output, where there is no /proc (ps, sysctl). child_process is loaded only then:
 * `gatehouse run` reads identities before the daemon's bundle, which loads its own.
 */
function runForText(command: string, args: string[]): string {
  const { execFileSync } = createRequire(import.meta.url)(
    'node:child_process',
  ) as typeof import('node:child_process');
  return execFileSync(command, args, { encoding: 'utf8' });
}

export interface ProcStat {
  pid: number;
  /** One letter: R, S, D, T, Z (zombie), X (dead), … */
  state: string;
  ppid: number;
  pgid: number;
  sid: number;
  /** Linux: field 22 of /proc/<pid>/stat (clock ticks since boot). macOS: epoch seconds from ps. */
  startTime: number;
  /** CPU time used so far (user + system), in seconds. */
  cpuSeconds: number;
  /** Resident memory in bytes. */
  rssBytes: number;
}

const hasProc = LINUX;

const AT_PAGESZ = 6;
const AT_CLKTCK = 17;
const WORD = ['arm', 'ia32', 'mips', 'mipsel', 'ppc', 's390'].includes(process.arch) ? 4 : 8;

/**
 * Clock ticks per second and page size, the units of /proc/<pid>/stat, as getconf would say
 * them: from the auxiliary vector the kernel gave this process (pairs of native words), so
 * start-up runs no subprocess for them.
 */
function readKernelUnits(): { clockTicks: number; pageSize: number } {
  const units = { clockTicks: 100, pageSize: 4096 };
  if (!hasProc) return units;
  try {
    const auxv = readFileSync('/proc/self/auxv');
    const le = endianness() === 'LE';
    const read = (at: number): number =>
      WORD === 8
        ? Number(le ? auxv.readBigUInt64LE(at) : auxv.readBigUInt64BE(at))
        : le
          ? auxv.readUInt32LE(at)
          : auxv.readUInt32BE(at);
    for (let at = 0; at + 2 * WORD <= auxv.length; at += 2 * WORD) {
      const value = read(at + WORD);
      if (read(at) === AT_CLKTCK && value > 0) units.clockTicks = value;
      if (read(at) === AT_PAGESZ && value > 0) units.pageSize = value;
    }
  } catch {
    // Keep Linux's usual units.
  }
  return units;
}

let units: { clockTicks: number; pageSize: number } | undefined;
function kernelUnits(): { clockTicks: number; pageSize: number } {
  units ??= readKernelUnits();
  return units;
}

/** The largest pid any supported kernel hands out (Linux PID_MAX_LIMIT). */
const PID_LIMIT = 4_194_304;

export function isPid(value: unknown): value is number {
  return (
    typeof value === 'number' && Number.isSafeInteger(value) && value > 0 && value <= PID_LIMIT
  );
}

/** Parses the text of /proc/<pid>/stat; the command name may hold spaces and parentheses. */
export function parseProcStat(pid: number, text: string): ProcStat | null {
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const fields = text.slice(close + 2).split(' ');
  // fields[0] is field 3 of the stat line (state); field N is fields[N - 3].
  const state = fields[0];
  // ppid 4, pgrp 5, session 6, utime 14, stime 15, starttime 22, rss 24
  const numbers = [1, 2, 3, 11, 12, 19, 21].map((i) => Number(fields[i] ?? NaN));
  if (!state || numbers.some((n) => !Number.isSafeInteger(n))) return null;
  const [ppid, pgid, sid, utime, stime, startTime, rss] = numbers as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return {
    pid,
    state,
    ppid,
    pgid,
    sid,
    startTime,
    cpuSeconds: (utime + stime) / kernelUnits().clockTicks,
    rssBytes: rss * kernelUnits().pageSize,
  };
}

/** One buffer for every stat read: a stat line is a few hundred bytes. */
let statBuffer = Buffer.alloc(1024);

/**
 * /proc/<pid>/stat's text: one open, read and close into a buffer kept for it (readFileSync
 * cannot know the size of a /proc file, so it reads twice and allocates each time).
 */
function readStatText(pid: number): string {
  const fd = openSync(`/proc/${pid}/stat`, constants.O_RDONLY);
  try {
    let length = 0;
    for (;;) {
      const n = readSync(fd, statBuffer, length, statBuffer.length - length, null);
      length += n;
      if (n === 0 || length < statBuffer.length) break;
      const larger = Buffer.alloc(statBuffer.length * 2);
      statBuffer.copy(larger);
      statBuffer = larger;
    }
    return statBuffer.toString('latin1', 0, length);
  } finally {
    closeSync(fd);
  }
}

/** The process's facts, or null when no such pid exists. */
export function readProcStat(pid: number): ProcStat | null {
  if (!isPid(pid)) return null;
  if (hasProc) {
    try {
      return parseProcStat(pid, readStatText(pid));
    } catch {
      return null;
    }
  }
  return readPsStat(pid);
}

/** Every pid in /proc (Linux). */
export function procPids(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/** Every process on the machine (zombies included), read in one pass. */
export function listProcesses(): ProcStat[] {
  if (!hasProc) return listPs();
  const all: ProcStat[] = [];
  for (const pid of procPids()) {
    const stat = readProcStat(pid);
    if (stat) all.push(stat);
  }
  return all;
}

/**
 * listProcesses for a table too large to read in one go: it yields to the event loop before
 * every `slice` processes (the first too), so requests and exits are served while it reads.
 */
export async function scanProcesses(slice = 128): Promise<ProcStat[]> {
  if (!hasProc) return listPs();
  const all: ProcStat[] = [];
  const pids = procPids();
  for (let i = 0; i < pids.length; i++) {
    if (i % slice === 0) await new Promise((resolve) => setImmediate(resolve));
    const stat = readProcStat(pids[i]!);
    if (stat) all.push(stat);
  }
  return all;
}

/** Every process whose process group is `pgid`, zombies included. */
export function listProcessGroup(pgid: number): ProcStat[] {
  return isPid(pgid) ? listProcesses().filter((p) => p.pgid === pgid) : [];
}

/**
 * Now, in the unit of a Linux start time (clock ticks since boot), so "started before now" can
 * be asked of a process; elsewhere epoch seconds, the unit ps gives.
 */
export function startTimeNow(): number {
  if (!hasProc) return Date.now() / 1000;
  const uptime = uptimeSeconds();
  return uptime === null ? 0 : Math.floor(uptime * kernelUnits().clockTicks);
}

/** A Linux start time (clock ticks since boot) in milliseconds since boot. */
export function startTimeMs(startTime: number): number {
  return (startTime * 1000) / kernelUnits().clockTicks;
}

/** The process's argv, or null when it cannot be read. */
export function readCmdline(pid: number): string[] | null {
  if (!isPid(pid)) return null;
  try {
    if (hasProc) {
      const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      return raw.split('\0').filter((part) => part.length > 0);
    }
    const out = runForText('ps', ['-o', 'command=', '-p', String(pid)]);
    return out.trim().split(/\s+/);
  } catch {
    return null;
  }
}

/** The process's environment as NAME=value strings, or null when it cannot be read. */
export function readEnviron(pid: number): string[] | null {
  if (!isPid(pid) || !hasProc) return null;
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  } catch {
    return null;
  }
}

/** Identifies this boot, so start times from a previous boot never match. */
export function readBootId(): string {
  try {
    if (hasProc) return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return runForText('sysctl', ['-n', 'kern.boottime']).trim();
  } catch {
    return 'unknown';
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The boot id process `pid` sees, when it lives in another mount namespace of the same user
 * namespace (a sandboxed unit beside a container's shell), else null. Read through its root
 * without following a last symlink or blocking, from a regular file, as a UUID only: the path
 * is inside a root the process may shape.
 */
export function bootIdSeenBy(pid: number): string | null {
  if (!hasProc) return null;
  let fd: number | undefined;
  try {
    const ns = (kind: string, who: string) => readlinkSync(`/proc/${who}/ns/${kind}`);
    if (ns('user', String(pid)) !== ns('user', 'self')) return null;
    if (ns('mnt', String(pid)) === ns('mnt', 'self')) return null;
    fd = openSync(
      `/proc/${pid}/root/proc/sys/kernel/random/boot_id`,
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
    if (!fstatSync(fd).isFile()) return null;
    const buf = Buffer.alloc(64);
    const id = buf
      .subarray(0, readSync(fd, buf, 0, 64, 0))
      .toString('utf8')
      .trim();
    return UUID.test(id) ? id : null;
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** "[dd-]hh:mm:ss" or "mm:ss.cc" → seconds. */
function parseCpuTime(text: string): number {
  const [days, rest] = text.includes('-') ? text.split('-') : ['0', text];
  const parts = (rest ?? '').split(':').map(Number);
  return Number(days) * 86400 + parts.reduce((acc, n) => acc * 60 + n, 0);
}

function parsePsLine(line: string): ProcStat | null {
  // pid ppid pgid sess rss(KiB) time stat lstart(5 words)
  const parts = line.trim().split(/\s+/);
  if (parts.length < 12) return null;
  const [pid, ppid, pgid, sid, rss, time, stat] = parts;
  const started = Date.parse(parts.slice(7, 12).join(' '));
  const numeric = [pid, ppid, pgid, sid, rss].every((n) => /^\d+$/.test(n ?? ''));
  if (!stat || !time || !numeric || Number.isNaN(started)) return null;
  return {
    pid: Number(pid),
    state: stat.charAt(0),
    ppid: Number(ppid),
    pgid: Number(pgid),
    sid: Number(sid),
    startTime: started / 1000,
    cpuSeconds: parseCpuTime(time),
    rssBytes: Number(rss) * 1024,
  };
}

const PS_COLUMNS = ['-o', 'pid=,ppid=,pgid=,sess=,rss=,time=,stat=,lstart='];

function readPsStat(pid: number): ProcStat | null {
  try {
    const out = runForText('ps', [...PS_COLUMNS, '-p', String(pid)]);
    return parsePsLine(out);
  } catch {
    return null;
  }
}

function listPs(): ProcStat[] {
  try {
    const out = runForText('ps', ['-A', ...PS_COLUMNS]);
    return out
      .split('\n')
      .map(parsePsLine)
      .filter((p): p is ProcStat => p !== null);
  } catch {
    return [];
  }
}
