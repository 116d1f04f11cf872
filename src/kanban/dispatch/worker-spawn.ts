// Starting one worker run: its folder, the wrapper as group and session leader, env, log; proc.json first.
import { accessSync, closeSync, constants, mkdirSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { PACKAGE_ROOT } from '../../config/defaults.js';
import type { Profile } from '../../config/schema.js';
import {
  currentBootId,
  readProcStat,
  startProcess,
  type StartedProcess,
} from '../../proc/index.js';
import type { Claim } from '../moves/claim.js';
import type { ProcRecord } from '../model/types.js';
import {
  fillJson,
  runDir,
  runFile,
  writeRunFolder,
  type RunFileContent,
  type RunFileName,
} from './run-files.js';
import { agentKind } from '../../agents/kinds.js';
import { runView, type RunViewRequest } from '../../sandbox/run-view.js';
import { bwrapArgs, type Mount } from '../../sandbox/view.js';
import type { AgentStart } from './agent-runs.js';

/** Creates `<dataDir>/runs` (once, before the first spawn). */
export function ensureRunsDir(dataDir: string): void {
  mkdirSync(join(dataDir, 'runs'), { recursive: true });
}

/** The POSIX sh wrapper that records exit.json (see libexec/run-worker.sh). */
export const WRAPPER = join(PACKAGE_ROOT, 'libexec/run-worker.sh');

export interface SpawnRequest {
  claim: Claim;
  profile: Profile;
  dataDir: string;
  /** The daemon's base URL for GATEHOUSE_URL, no trailing slash. */
  baseUrl: string;
  inheritedEnv: Record<string, string>;
  /** What a sandboxed run's view is built from (docs/sandbox.md). */
  config: RunViewRequest['config'];
  /** The cgroup the wrapper moves itself into before it starts the worker, or null. */
  cgroup: string | null;
  /** The task's workspace: the worker's cwd, what its environment adds, its git view's mounts. */
  workspace: { cwd: string; env: Record<string, string>; mounts: Mount[] } | null;
  /** An agent profile's run: its prompt and plan (docs/agents.md), or null. */
  agent: AgentStart | null;
  /** The run's way to gatehouse's MCP tools (docs/mcp.md), or null: its profile has none. */
  mcp: { url: string; token: string } | null;
}

/** Where a run finds its MCP token (docs/mcp.md). */
export const MCP_TOKEN_ENV = 'GATEHOUSE_MCP_TOKEN';

export type Spawned =
  { ok: true; child: StartedProcess; proc: ProcRecord } | { ok: false; error: string };

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Why the profile cannot start here (missing cwd or program), or null. */
function preflight(profile: Profile, cwd: string, env: Record<string, string>): string | null {
  try {
    if (!statSync(cwd).isDirectory()) return `cwd ${cwd} is not a directory`;
  } catch (err) {
    return `cwd ${cwd}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
  }
  const program = profile.command[0]!;
  if (program.includes('/'))
    return isExecutable(program)
      ? null
      : `program ${program} is missing or not executable (ENOENT/EACCES)`;
  const dirs = (env.PATH ?? '').split(delimiter).filter(Boolean);
  return dirs.some((dir) => isExecutable(join(dir, program)))
    ? null
    : `program "${program}" not found on PATH (ENOENT)`;
}

/** What an agent's environment keeps of the daemon's own (docs/agents.md). */
const AGENT_INHERITS = ['PATH', 'HOME', 'LANG'] as const;

export function workerEnv(req: SpawnRequest, dir: string): Record<string, string> {
  const instructions: Record<string, string> =
    req.claim.task.instructions !== null
      ? { GATEHOUSE_INSTRUCTIONS_FILE: runFile(dir, 'instructions.md') }
      : {};
  const agent = req.profile.agent;
  if (agent) {
    // No worker API for an agent: no run token, no URL, none of the daemon's variables, so a
    // prompt-injected agent cannot report a verdict of its own.
    const inherited: Record<string, string> = {};
    for (const name of AGENT_INHERITS)
      if (req.inheritedEnv[name] !== undefined) inherited[name] = req.inheritedEnv[name];
    return {
      ...inherited,
      ...(req.profile.sandbox.kind === 'bwrap'
        ? { HOME: sandboxHome(req.dataDir, req.profile) }
        : {}),
      ...agentKind(agent.kind).env(agent),
      ...req.profile.env,
      ...req.workspace?.env,
      GATEHOUSE_TASK_ID: req.claim.task.id,
      GATEHOUSE_RUN_ID: req.claim.run.id,
      GATEHOUSE_RUN_DIR: dir,
      ...mcpEnv(req),
      ...instructions,
    };
  }
  return {
    ...req.inheritedEnv,
    ...(req.profile.sandbox.kind === 'bwrap'
      ? { HOME: sandboxHome(req.dataDir, req.profile) }
      : {}),
    ...req.profile.env,
    ...req.workspace?.env,
    GATEHOUSE_URL: req.baseUrl,
    GATEHOUSE_TASK_ID: req.claim.task.id,
    GATEHOUSE_RUN_ID: req.claim.run.id,
    GATEHOUSE_RUN_TOKEN: req.claim.token,
    GATEHOUSE_RUN_DIR: dir,
    GATEHOUSE_TASK_FILE: runFile(dir, 'task.json'),
    ...mcpEnv(req),
    ...instructions,
  };
}

/** The run's MCP endpoint and token, for a profile with `mcp` (docs/mcp.md). */
function mcpEnv(req: SpawnRequest): Record<string, string> {
  return req.mcp ? { GATEHOUSE_MCP_URL: req.mcp.url, [MCP_TOKEN_ENV]: req.mcp.token } : {};
}

/** An agent run's argv, and the files its start adds to the run folder; null for a command. */
function agentStart(
  req: SpawnRequest,
  dir: string,
): { argv: string[]; files: [RunFileName, RunFileContent][] } | null {
  const agent = req.profile.agent;
  if (!agent || !req.agent) return null;
  const kind = agentKind(agent.kind);
  const mcp = req.mcp
    ? { url: req.mcp.url, tokenEnv: MCP_TOKEN_ENV, configFile: runFile(dir, 'mcp.json') }
    : null;
  const mcpFile = mcp ? kind.mcpFile(mcp) : null;
  return {
    argv: [req.profile.command[0]!, ...kind.args(agent, { ...req.agent.plan, mcp })],
    files: [
      ['prompt.md', { text: req.agent.prompt }],
      ['agent.json', { json: req.agent.record }],
      ...(mcpFile ? [['mcp.json', { json: mcpFile }] as [RunFileName, RunFileContent]] : []),
    ],
  };
}

/** The home of a sandboxed profile's runs: its own, kept across runs (docs/sandbox.md). */
export function sandboxHome(dataDir: string, profile: Profile): string {
  return profile.env.HOME ?? join(dataDir, 'homes', profile.name);
}

/** bubblewrap's arguments for the run, NUL-separated in its folder (the wrapper's --sandbox). */
async function writeSandboxArgs(
  req: SpawnRequest,
  dir: string,
  env: Record<string, string>,
  cwd: string,
): Promise<string> {
  if (env.HOME) await mkdir(env.HOME, { recursive: true, mode: 0o700 });
  const view = runView({
    config: req.config,
    profile: req.profile,
    runDir: dir,
    env,
    cwd,
    workspace: req.workspace?.cwd ?? null,
    gitMounts: req.workspace?.mounts ?? [],
  });
  const file = join(dir, 'sandbox.args');
  await writeFile(file, `${bwrapArgs(view).join('\0')}\0`);
  return file;
}

/** A run's folder written and its log opened, ready for its spawn. */
export interface PreparedRun {
  dir: string;
  /** The wrapper's arguments after its own name: options, exit.json, the worker's argv. */
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** The run's log, open for appending: the wrapper's stdout and stderr. */
  logFd: number;
}

/**
 * The run's folder and files (task.json, an empty proc.json, the instructions, an agent's
 * prompt), its program checked and its log opened: file work done off the event loop, where a
 * slow disk blocks nothing else, before the spawn. Nothing is started; a run whose proc.json is
 * missing or empty has no recorded worker (adoption finds one by its marker).
 */
export async function prepareRun(
  req: SpawnRequest,
): Promise<{ ok: true; run: PreparedRun } | { ok: false; error: string }> {
  const { claim, profile } = req;
  const dir = runDir(req.dataDir, claim.run.id);
  const agent = agentStart(req, dir);
  const env = workerEnv(req, dir);
  const cwd = req.workspace?.cwd ?? profile.cwd;
  const problem = preflight(profile, cwd, env);
  if (problem) return { ok: false, error: problem };
  // The folder may be made already: the run's workspace was prepared (its setup writes to the
  // run's log).
  const logFd = await writeRunFolder(
    dir,
    new Map<RunFileName, RunFileContent>([
      // Nothing reads it before the worker starts, and a run that never started is not
      // adopted: a plain write is enough.
      ['task.json', { json: { ...claim.task, runId: claim.run.id, profile: profile.name } }],
      // Empty until the spawn fills it in: an empty proc.json is read as no record.
      ['proc.json', { text: '' }],
      // A follow-up's instructions, as a file of their own (any size, intact).
      ...(claim.task.instructions !== null
        ? [['instructions.md', { text: claim.task.instructions }] as const]
        : []),
      ...(agent?.files ?? []),
    ]),
    claim.run.logPath,
  );
  const io = req.agent ? ['--io', runFile(dir, 'prompt.md'), runFile(dir, 'agent.jsonl')] : [];
  const cgroup = req.cgroup === null ? [] : ['--cgroup', req.cgroup];
  let sandbox: string[] = [];
  if (profile.sandbox.kind === 'bwrap') {
    try {
      sandbox = ['--sandbox', await writeSandboxArgs(req, dir, env, cwd)];
    } catch (err) {
      closeSync(logFd);
      return { ok: false, error: `the run's sandbox could not be made: ${(err as Error).message}` };
    }
  }
  const args = [
    ...cgroup,
    ...sandbox,
    ...io,
    runFile(dir, 'exit.json'),
    ...(agent?.argv ?? profile.command),
  ];
  return { ok: true, run: { dir, args, env, cwd, logFd } };
}

/**
 * Spawns the prepared run's wrapper (argv, no shell for the worker's own command) in a new
 * session and process group, stdin from /dev/null, stdout and stderr appended to the run's log,
 * and writes proc.json in the same turn the spawn is known in, before anything else runs
 * (start-process.ts); the caller holds the run as launching until this settles, so nothing can
 * act on it half started. The log's descriptor is closed
 * here, whatever happens. With `until` (boot-clock ms), the wrapper starts no worker past it.
 */
export async function spawnWorker(prepared: PreparedRun, until: number | null): Promise<Spawned> {
  const { dir, logFd } = prepared;
  const deadline = until === null ? [] : ['--until', String(Math.floor(until))];
  // Never throws: what fails rejects. The starter copies the log's descriptor as it is called.
  const starting = startProcess({
    file: '/bin/sh',
    args: [WRAPPER, ...deadline, ...prepared.args],
    cwd: prepared.cwd,
    env: prepared.env,
    output: logFd,
  });
  try {
    closeSync(logFd);
  } catch {
    // Only a descriptor already bad, which the start has refused: it is awaited below either way.
  }
  let child: StartedProcess;
  try {
    child = await starting;
  } catch (err) {
    return {
      ok: false,
      error: `the run's wrapper could not be started: ${(err as Error).message}`,
    };
  }
  const pid = child.pid;
  // The stat exists until reaped, which cannot happen before the event loop's next poll.
  const stat = readProcStat(pid);
  const proc: ProcRecord = {
    pid,
    pgid: pid,
    startTime: stat?.startTime ?? 0,
    bootId: currentBootId(),
  };
  try {
    // One write of a few dozen bytes into the empty file prepareRun made, which no one reads
    // while this daemon lives: a reader after a crash sees all of it or an empty file, which is
    // read as no record (the run is then found by its marker), as a missing one is. No
    // temporary file and rename to pay for, and no file made on the event loop.
    fillJson(runFile(dir, 'proc.json'), proc);
  } catch (err) {
    // Unrecorded, it could not be adopted after a restart: end it now (our own child, its
    // group still led by it), and say nothing was started.
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
    return { ok: false, error: `cannot record the worker's identity: ${(err as Error).message}` };
  }
  return { ok: true, child, proc };
}
