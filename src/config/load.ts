// Reads the configuration once: defaults, then the file, then environment, then flags; validates
// (messages.ts says what is wrong) and freezes it.
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, isAbsolute, resolve } from 'node:path';
import { defaultConfig } from './defaults.js';
import { locateFile, type ConfigOverrides } from './locate.js';
import { ConfigError } from './config-error.js';
import { validate } from './messages.js';
import { resolvePlatforms } from './platform-options.js';
import {
  type AgentConfig,
  type Config,
  type Profile,
  type RawConfig,
  type WorkspacesConfig,
} from './schema.js';
import { checkAssignees, resolveApproval, resolveMcp } from './mcp.js';
import { resolveSchedules } from './schedules.js';
import { resolveBudgets } from './budgets.js';
import { resolveSandbox } from './sandbox.js';
import { profileWorkspace, resolveWorkspaces } from './workspaces.js';

export { ConfigError } from './config-error.js';
export type { ConfigOverrides } from './locate.js';

type Json = Record<string, unknown>;

function isPlainObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Objects merge key by key; anything else (arrays included) replaces. */
function merge(base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return over;
  const out: Json = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = merge(base[key], value);
  return out;
}

function readConfigFile(path: string): Json {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(path, `cannot read the config file (${(err as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(path, `not valid JSON (${(err as Error).message})`);
  }
  if (!isPlainObject(parsed)) throw new ConfigError(path, 'must hold one JSON object');
  return parsed;
}

/**
 * What systemd tells the daemon alone (its notify socket, its watchdog): a worker that saw them
 * could report the daemon ready or alive.
 */
const SERVICE_MANAGER_ENV = new Set(['NOTIFY_SOCKET', 'WATCHDOG_USEC', 'WATCHDOG_PID']);

function fromEnvironment(env: NodeJS.ProcessEnv): Json {
  const out: Json = {};
  if (env.GATEHOUSE_DATA_DIR) out.dataDir = env.GATEHOUSE_DATA_DIR;
  const server: Json = {};
  if (env.GATEHOUSE_HOST) server.host = env.GATEHOUSE_HOST;
  if (env.GATEHOUSE_PORT) {
    if (!/^\d{1,5}$/.test(env.GATEHOUSE_PORT)) {
      throw new ConfigError(
        'GATEHOUSE_PORT',
        `expected a port number, got "${env.GATEHOUSE_PORT}"`,
      );
    }
    server.port = Number(env.GATEHOUSE_PORT);
  }
  if (Object.keys(server).length > 0) out.server = server;
  if (env.GATEHOUSE_TOKEN) out.api = { token: env.GATEHOUSE_TOKEN };
  // The database's password belongs in the environment (or a credential), not the config file.
  if (env.GATEHOUSE_DATABASE_URL) out.store = { kind: 'postgres', url: env.GATEHOUSE_DATABASE_URL };
  return out;
}

function fromFlags(overrides: ConfigOverrides): Json {
  const out: Json = {};
  if (overrides.dataDir !== undefined) out.dataDir = overrides.dataDir;
  const server: Json = {};
  if (overrides.host !== undefined) server.host = overrides.host;
  if (overrides.port !== undefined) server.port = overrides.port;
  if (Object.keys(server).length > 0) out.server = server;
  return out;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

export function isLoopback(host: string): boolean {
  return LOOPBACK.test(host);
}

/**
 * A relative program path (one with a slash) is resolved against cwd; so is a relative argument
 * that names an existing file there. Anything else (flags, inline scripts, URLs) stays as is.
 */
function resolveArg(cwd: string, arg: string, index: number): string {
  if (isAbsolute(arg) || arg.startsWith('-')) return arg;
  if (index === 0) return arg.includes('/') ? resolve(cwd, arg) : arg;
  return arg.includes('/') && existsSync(resolve(cwd, arg)) ? resolve(cwd, arg) : arg;
}

const configError = (key: string, message: string) => new ConfigError(key, message);

function resolveProfiles(
  raw: RawConfig['workers']['profiles'],
  baseDir: string,
  repos: WorkspacesConfig['repos'],
): Record<string, Profile> {
  const out: Record<string, Profile> = {};
  for (const [name, p] of Object.entries(raw)) {
    const cwd = p.cwd ? resolve(baseDir, p.cwd) : baseDir;
    const at = `workers.profiles.${name}`;
    if ((p.command === undefined) === (p.agent === undefined))
      throw configError(
        at,
        'expected exactly one of "command" (a program) and "agent" (docs/agents.md)',
      );
    const agent = p.agent ? resolveAgent(p.agent, cwd, `${at}.agent`) : null;
    if (agent && p.keepDescendants)
      throw configError(
        `${at}.keepDescendants`,
        "an agent profile's run is ended whole (its tools too) once it has its verdict",
      );
    const sandbox = resolveSandbox(p, at, configError);
    out[name] = {
      name,
      command: agent ? [agent.bin] : p.command!.map((arg, i) => resolveArg(cwd, arg, i)),
      agent,
      cwd,
      env: p.env ?? {},
      maxConcurrent: p.maxConcurrent ?? null,
      maxRuntimeSeconds: p.maxRuntimeSeconds ?? null,
      keepDescendants: p.keepDescendants ?? false,
      review: p.review ?? false,
      sandbox,
      mcp: resolveMcp(p, at, sandbox, configError),
      approval: resolveApproval(p),
      ...resolveBudgets(p, agent, at, configError),
      ...profileWorkspace(name, p, repos, configError),
    };
  }
  checkAssignees(out, configError);
  return out;
}

const DEFAULT_IDLE_SECONDS = 600;

function resolveAgent(
  raw: NonNullable<RawConfig['workers']['profiles'][string]['agent']>,
  cwd: string,
  at: string,
): AgentConfig {
  const models = [...new Set(raw.models ?? [])];
  if (raw.model !== undefined && models.length > 0 && !models.includes(raw.model))
    throw configError(`${at}.models`, `expected to include the profile's model "${raw.model}"`);
  return {
    kind: raw.kind,
    bin: resolveArg(cwd, raw.bin ?? raw.kind, 0),
    model: raw.model ?? null,
    models,
    args: raw.args ?? [],
    maxTurns: raw.maxTurns ?? null,
    idleTimeoutSeconds: raw.idleTimeoutSeconds ?? DEFAULT_IDLE_SECONDS,
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** Seconds a host's lease needs beyond its kill grace: three renewals, and 2 s of margin. */
function fenceRoom(renewSeconds: number, killGraceSeconds: number): number {
  return renewSeconds * 3 + killGraceSeconds + 2;
}

/**
 * The cluster's timings, checked only where they apply: a board shared by many hosts (on
 * SQLite no lease can break a run, so any kill grace goes). There, a lease the operator did not
 * set is derived to fit the kill grace; one they set must fit it, or it is refused.
 */
function clusterTimings(raw: RawConfig, layers: Json[]): RawConfig['cluster'] {
  if (raw.store.kind !== 'postgres') return raw.cluster;
  const { renewSeconds } = raw.cluster;
  const grace = raw.workers.killGraceSeconds;
  const room = fenceRoom(renewSeconds, grace);
  const leaseSet = layers.some((l) => isPlainObject(l.cluster) && 'leaseSeconds' in l.cluster);
  const leaseSeconds = leaseSet
    ? raw.cluster.leaseSeconds
    : Math.max(raw.cluster.leaseSeconds, room);
  if (renewSeconds * 2 > leaseSeconds) {
    throw new ConfigError(
      'cluster.renewSeconds',
      `must be at most half of cluster.leaseSeconds (${leaseSeconds}): a lease must outlast a renewal that fails once`,
    );
  }
  // Workers are sent TERM killGraceSeconds before KILL, which comes 2 s before the lease ends:
  // that TERM must survive a failed renewal, with a renewal to spare.
  if (leaseSeconds < room) {
    throw new ConfigError(
      'cluster.leaseSeconds',
      `must be at least 3 × cluster.renewSeconds + workers.killGraceSeconds + 2 (${room}) on a shared board: a host's workers are ended before its lease runs out, and a renewal that fails once must not end them (leave it unset to have it derived)`,
    );
  }
  return { ...raw.cluster, leaseSeconds };
}

/**
 * The environment workers inherit: the daemon's own without gatehouse's variables, what systemd
 * tells the daemon alone, and the variables that hold a forge's token or webhook secret.
 */
function workerEnvOf(
  env: NodeJS.ProcessEnv,
  workspaces: WorkspacesConfig,
  secretEnv: readonly string[],
): Record<string, string> {
  const secrets = new Set<string>(secretEnv);
  for (const repo of Object.values(workspaces.repos)) {
    if (repo.pr) secrets.add(repo.pr.tokenEnv);
    if (repo.pr?.webhookSecretEnv) secrets.add(repo.pr.webhookSecretEnv);
  }
  return Object.fromEntries(
    Object.entries(env).filter(
      (e): e is [string, string] =>
        e[1] !== undefined &&
        !e[0].startsWith('GATEHOUSE_') &&
        !SERVICE_MANAGER_ENV.has(e[0]) &&
        !secrets.has(e[0]),
    ),
  );
}

/** Builds the configuration; throws ConfigError naming the first thing that is wrong. */
export function loadConfig(
  overrides: ConfigOverrides,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
  /** The daemon needs its secrets (a forge's token); the CLI, which only calls the API, does not. */
  { secrets = true }: { secrets?: boolean } = {},
): Config {
  const file = locateFile(overrides, env, cwd);
  const layers = [file ? readConfigFile(file) : {}, fromEnvironment(env), fromFlags(overrides)];
  const raw = validate(layers.reduce<unknown>((acc, layer) => merge(acc, layer), defaultConfig()));
  if (!isLoopback(raw.server.host) && raw.api.token === null) {
    throw new ConfigError(
      'api.token',
      `required when server.host (${raw.server.host}) is not loopback`,
    );
  }
  if (!(raw.workers.defaultProfile in raw.workers.profiles)) {
    throw new ConfigError(
      'workers.defaultProfile',
      `no profile named "${raw.workers.defaultProfile}"`,
    );
  }
  const cluster = clusterTimings(raw, layers);
  const baseDir = file ? dirname(file) : cwd;
  const dataDir = resolve(cwd, raw.dataDir);
  const workspaces = resolveWorkspaces(raw.workspaces, baseDir, dataDir, env, configError, secrets);
  const profiles = resolveProfiles(raw.workers.profiles, baseDir, workspaces.repos);
  return deepFreeze({
    ...raw,
    dataDir,
    workspaces,
    workers: { ...raw.workers, profiles },
    schedules: resolveSchedules(
      raw.schedules,
      profiles,
      workspaces.repos,
      raw.workers.defaultProfile,
      configError,
    ),
    platforms: resolvePlatforms(raw.platforms),
    store:
      raw.store.kind === 'sqlite'
        ? raw.store
        : {
            kind: 'postgres',
            url: raw.store.url,
            schema: raw.store.schema ?? 'gatehouse',
            poolSize: raw.store.poolSize ?? 10,
          },
    cluster: { ...cluster, hostName: raw.cluster.hostName ?? hostname() },
    source: file,
    journalStream: env.JOURNAL_STREAM ?? null,
    workerEnv: workerEnvOf(env, workspaces, raw.workers.secretEnv),
  });
}
