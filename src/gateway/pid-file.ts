// The pid file: who owns a data dir, written atomically, read defensively, removed only by its owner.
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { isPid, pidExists, readCmdline, type ProcessIdentity } from '../proc/index.js';

export interface PidRecord {
  pid: number;
  startTime: number;
  bootId: string;
  argv: string[];
  port: number;
  dataDir: string;
  startedAt: number;
  version: string;
}

export const PID_FILE = 'gatehouse.pid';

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

/** Parses a pid file's text; anything but a complete, well-typed record is null (stale). */
export function parsePidRecord(text: string): PidRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const r = value as Record<string, unknown>;
  const ok =
    isPid(r.pid) &&
    typeof r.startTime === 'number' &&
    Number.isFinite(r.startTime) &&
    typeof r.bootId === 'string' &&
    isStringArray(r.argv) &&
    typeof r.port === 'number' &&
    Number.isInteger(r.port) &&
    typeof r.dataDir === 'string' &&
    typeof r.startedAt === 'number' &&
    typeof r.version === 'string';
  return ok ? (r as unknown as PidRecord) : null;
}

/** The record, or null when the file is missing, unreadable or garbage. */
export function readPidFile(path: string): PidRecord | null {
  try {
    return parsePidRecord(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

export function writePidFile(path: string, record: PidRecord): void {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, `${JSON.stringify(record)}\n`, { mode: 0o644 });
    renameSync(tmp, path);
  } catch (err) {
    // A full disk leaves an empty temp file behind: nothing of a failed write stays.
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** Removes the pid file only if it still names `self`; a successor's file is left alone. */
export function removePidFileIfOurs(path: string, self: ProcessIdentity): void {
  const record = readPidFile(path);
  if (record && record.pid === self.pid && record.startTime === self.startTime) {
    rmSync(path, { force: true });
  }
}

/** A gatehouse command line: node running our bin or entry script. */
export function isGatehouseCommand(argv: readonly string[]): boolean {
  return argv.some((arg) => /^gatehouse(\.js)?$/.test(basename(arg)));
}

/** The record names a live gatehouse (same identity) serving this data dir. */
export function ownerIsLive(record: PidRecord, dataDir: string): boolean {
  const identity = { pid: record.pid, startTime: record.startTime, bootId: record.bootId };
  if (record.dataDir !== dataDir || !pidExists(record.pid, identity)) return false;
  const cmdline = readCmdline(record.pid);
  return cmdline !== null && isGatehouseCommand(cmdline);
}
