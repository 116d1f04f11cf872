// Processes a test starts: each in its own group, marked in its environment, all ended after the test.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterEach } from 'vitest';
import { readdirSync } from 'node:fs';
import {
  currentBootId,
  identityOf,
  readEnviron,
  readProcStat,
  terminateRun,
  terminateProcess,
  type ProcessIdentity,
} from '../../src/proc/index.js';

/**
 * Every process a test file spawns carries this, so cleanup can prove what is ours. Not a
 * GATEHOUSE_ name: the daemon passes it on to the workers it spawns, so they carry it too.
 */
export const TEST_MARK = `GH_TEST_MARK=${randomUUID()}`;
const [markName, markValue] = TEST_MARK.split('=') as [string, string];

const started: ProcessIdentity[] = [];

export interface Spawned {
  child: ChildProcess;
  pid: number;
  identity: ProcessIdentity;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * Also every byte of its stdout and stderr read ('exit' can come first). Only for processes
   * that leave no child holding those pipes.
   */
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** stdout and stderr as they arrived, interleaved. */
  output: () => string;
  stdout: () => string;
  stderr: () => string;
}

/** Spawns `argv` in its own process group, recording its output; ended after the test. */
export function spawnTracked(argv: string[], options: SpawnOptions = {}): Spawned {
  const [cmd, ...args] = argv as [string, ...string[]];
  const child = spawn(cmd, args, {
    ...options,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...(options.env ?? process.env), [markName]: markValue },
  });
  let out = '';
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not spawn ${cmd}`);
  // Read the stat even if the child already exited (a zombie until Node reaps it): its start
  // time is what proves the group ours at cleanup.
  const identity = { pid, startTime: readProcStat(pid)?.startTime ?? -1, bootId: currentBootId() };
  started.push(identity);
  return {
    child,
    pid,
    identity,
    exited,
    closed,
    output: () => out,
    stdout: () => stdout,
    stderr: () => stderr,
  };
}

/** Ends every process group a test started (identity-checked, with the test mark as proof). */
export async function endAllStarted(): Promise<void> {
  const all = started.splice(0);
  await Promise.all(
    all.map((id) =>
      terminateRun(
        id,
        { marker: TEST_MARK, groupHeldUntil: null },
        { graceMs: 2000, killWaitMs: 2000 },
      ),
    ),
  );
  // Workers run in sessions of their own; they inherit the mark, which proves they are ours.
  for (const pid of markedPids()) {
    const identity = identityOf(pid);
    if (identity) await terminateProcess(identity, { graceMs: 0, killWaitMs: 2000 });
  }
}

/** Live processes whose environment carries this test run's mark. */
export function markedPids(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)
    .map(Number)
    .filter((pid) => identityOf(pid) !== null && (readEnviron(pid)?.includes(TEST_MARK) ?? false));
}

afterEach(endAllStarted);
