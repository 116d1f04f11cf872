// Running the built daemon as a real process: start it, wait until it serves, read its pid file.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach } from 'vitest';
import { readPidFile, type PidRecord } from '../../src/gateway/pid-file.js';
import { endAllStarted, spawnTracked, type Spawned } from './procs.js';
import { waitFor } from './wait.js';

export const ROOT = resolve(import.meta.dirname, '../..');
export const BIN = join(ROOT, 'bin/gatehouse.js');

const dirs: string[] = [];

/** A fresh data dir, removed after the test. */
export function tempDir(prefix = 'gatehouse-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  // The processes first: a worker's wrapper writes exit.json into its run folder as it ends,
  // which made a removal already under way fail with ENOTEMPTY.
  await endAllStarted();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Writes a config file into `dir` and returns its path. */
export function writeConfig(dir: string, config: object): string {
  const path = join(dir, 'gatehouse.json');
  writeFileSync(path, JSON.stringify(config, null, 2));
  return path;
}

export interface DaemonOptions {
  dataDir: string;
  config?: string;
  port?: number;
  replace?: boolean;
  extraArgs?: string[];
  env?: NodeJS.ProcessEnv;
}

export function gatehouseArgs(command: string, opts: DaemonOptions): string[] {
  const args = [process.execPath, BIN, command, '--data-dir', opts.dataDir];
  if (opts.config) args.push('--config', opts.config);
  return args;
}

/** Starts `gatehouse run` as a tracked process (own group). */
export function startDaemon(opts: DaemonOptions): Spawned {
  const args = gatehouseArgs('run', opts);
  args.push('--port', String(opts.port ?? 0));
  if (opts.replace) args.push('--replace');
  args.push(...(opts.extraArgs ?? []));
  return spawnTracked(args, { cwd: ROOT, env: { ...cleanEnv(), ...opts.env } });
}

/**
 * The headers that authenticate to a daemon of `dataDir` that made its own API token (a
 * sandboxed profile and no api.token): none when it made none.
 */
export function daemonAuth(dataDir: string): Record<string, string> {
  try {
    return { authorization: `Bearer ${readFileSync(join(dataDir, 'api-token'), 'utf8').trim()}` };
  } catch {
    return {};
  }
}

/** The environment without any GATEHOUSE_* a developer's shell may carry. */
export function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('GATEHOUSE_')),
  );
}

export function pidRecord(dataDir: string): PidRecord | null {
  return readPidFile(join(dataDir, 'gatehouse.pid'));
}

/** Waits until `pid` owns the data dir, has bound its port and answers /health; returns the URL. */
export async function waitServing(
  dataDir: string,
  pid: number,
  timeoutMs = 15_000,
): Promise<string> {
  return waitFor(
    `pid ${pid} to serve ${dataDir}`,
    async () => {
      const record = pidRecord(dataDir);
      if (!record || record.pid !== pid || record.port === 0) return null;
      const url = `http://127.0.0.1:${record.port}`;
      const res = await fetch(`${url}/health`);
      return res.status === 200 ? url : null;
    },
    timeoutMs,
  );
}

/** A port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const address = server.address();
  await new Promise((res) => server.close(res));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one `gatehouse …` command to its end. */
export async function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const child = spawnTracked([process.execPath, BIN, ...args], {
    cwd: ROOT,
    env: { ...cleanEnv(), ...env },
  });
  const { code } = await child.closed;
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}
