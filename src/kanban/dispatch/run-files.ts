// The run folder (docs/operations.md): task.json, log, proc.json, exit.json, result.json; read defensively.
import {
  closeSync,
  open,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isPid, signalName } from '../../proc/index.js';
import { MAX_RESULT_BYTES, MAX_JSON_DEPTH, nestedDeeperThan } from '../model/json-limits.js';
import type { ExitRecord, ProcRecord, Verdict } from '../model/types.js';

export function runDir(dataDir: string, runId: string): string {
  return join(dataDir, 'runs', runId);
}

/**
 * Removes a run's folder (retention, a deleted task), off the event loop (its agent.jsonl can be
 * 100 MB); a folder already gone is fine.
 */
export async function removeRunDir(dataDir: string, runId: string): Promise<void> {
  await rm(runDir(dataDir, runId), { recursive: true, force: true });
}

export type RunFileName =
  | 'task.json'
  | 'log'
  | 'proc.json'
  | 'exit.json'
  | 'result.json'
  | 'instructions.md'
  | 'prompt.md'
  | 'agent.json'
  | 'agent.jsonl'
  | 'mcp.json';

export const runFile = (dir: string, name: RunFileName) => join(dir, name);

/** JSON as the run folder's files are written: indented, one value, a final newline. */
const jsonText = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** A file of a run's folder as its start writes it: text, or JSON (see jsonText). */
export type RunFileContent = { text: string } | { json: unknown };

/**
 * Makes a run's folder (and its parents) with `files` in it, each written whole, and opens its
 * log for appending: the log's descriptor. Off the event loop. Rejects as fs does (an error with
 * the errno's code) and leaves what was written.
 */
export async function writeRunFolder(
  dir: string,
  files: ReadonlyMap<RunFileName, RunFileContent>,
  logPath: string,
): Promise<number> {
  const names = [...files.keys()];
  const texts = [...files.values()].map((c) => ('text' in c ? c.text : jsonText(c.json)));
  await mkdir(dir, { recursive: true });
  for (let i = 0; i < names.length; i++) await writeFile(join(dir, names[i]!), texts[i]!);
  return new Promise<number>((resolve, reject) =>
    open(logPath, 'a', (err, fd) => (err ? reject(err) : resolve(fd))),
  );
}

/**
 * Writes JSON into an empty file made earlier (see writeJsonFile's callers): no file is
 * created, which is most of a small write's cost on a busy disk.
 */
export function fillJson(path: string, value: unknown): void {
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, jsonText(value));
  } finally {
    closeSync(fd);
  }
}

/** Writes a file atomically (temp file, then rename), so a reader never sees half of it. */
export function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

export function writeJsonAtomic(path: string, value: unknown): void {
  writeAtomic(path, jsonText(value));
}

/** proc.json and exit.json are a few dozen bytes; anything much larger is not ours. */
const MAX_RECORD_BYTES = 64 * 1024;

function readJson(path: string): unknown {
  try {
    const stat = statSync(path);
    // Not a regular file (a FIFO would block the read forever) or far too large: not ours.
    if (!stat.isFile() || stat.size > MAX_RECORD_BYTES) return undefined;
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** proc.json, or null when missing or not a complete record. */
export function readProcRecord(dir: string): ProcRecord | null {
  const v = readJson(runFile(dir, 'proc.json'));
  if (!isObject(v) || !isPid(v.pid) || !isPid(v.pgid) || typeof v.bootId !== 'string') return null;
  if (typeof v.startTime !== 'number' || !Number.isSafeInteger(v.startTime) || v.startTime < 0)
    return null;
  return { pid: v.pid, pgid: v.pgid, startTime: v.startTime, bootId: v.bootId };
}

/** Decodes a shell wait status: above 128 is "killed by signal (status - 128)". */
export function decodeStatus(status: number): ExitRecord {
  if (status > 128 && status < 128 + 65) {
    const n = status - 128;
    return { exitCode: null, signal: signalName(n) };
  }
  return { exitCode: status, signal: null };
}

/** exit.json, or null when missing or garbage. */
export function readExitRecord(dir: string): ExitRecord | null {
  const v = readJson(runFile(dir, 'exit.json'));
  if (
    !isObject(v) ||
    typeof v.status !== 'number' ||
    !Number.isInteger(v.status) ||
    v.status < 0 ||
    v.status > 255
  ) {
    return null;
  }
  // Written by the wrapper only with its own status 125 (run-worker.sh's --until).
  return v.started === false && v.status === 125
    ? { ...decodeStatus(v.status), notStarted: true }
    : decodeStatus(v.status);
}

/**
 * result.json: a verdict, null when absent, or an error string when present but not a verdict
 * (`{"status":"done","summary":…}` or `{"status":"blocked","reason":…}`).
 */
export function readVerdict(dir: string): Verdict | null | string {
  const path = runFile(dir, 'result.json');
  let text: string;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) return 'result.json is not a regular file';
    if (stat.size > MAX_RESULT_BYTES) return `result.json is larger than ${MAX_RESULT_BYTES} bytes`;
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return 'result.json is not valid JSON';
  }
  if (nestedDeeperThan(v)) return `result.json is nested deeper than ${MAX_JSON_DEPTH} levels`;
  if (
    isObject(v) &&
    v.status === 'done' &&
    (v.summary === undefined || typeof v.summary === 'string')
  ) {
    return {
      status: 'done',
      summary: v.summary ?? null,
      result: v.result ?? null,
    };
  }
  if (
    isObject(v) &&
    v.status === 'blocked' &&
    typeof v.reason === 'string' &&
    v.reason.trim() !== ''
  ) {
    return { status: 'blocked', reason: v.reason };
  }
  return 'result.json is not a verdict: expected {"status":"done","summary":…} or {"status":"blocked","reason":…}';
}
