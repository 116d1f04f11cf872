// Reads the configuration once: defaults, then the file, then environment, then flags; validates and freezes it.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { ValueError } from '@sinclair/typebox/value';
import { MIN_KEY_BYTES, secretKey } from '../platforms/webhook-signature.js';
import { matches } from '../schema-check.js';
import { DEFAULT_BREAKER, defaultConfig } from './defaults.js';
import { locateFile, type ConfigOverrides } from './locate.js';
import {
  type AgentConfig,
  ConfigSchema,
  type Config,
  type PlatformConfig,
  type Profile,
  type RawConfig,
  type WorkspacesConfig,
} from './schema.js';
import { checkAssignees, resolveApproval, resolveMcp } from './mcp.js';
import { resolveSchedules } from './schedules.js';
import { resolveBudgets } from './budgets.js';
import { resolveSandbox } from './sandbox.js';
import { profileWorkspace, resolveWorkspaces } from './workspaces.js';

/** A configuration mistake; `key` names what is wrong (a dotted path, a variable or the file). */
export class ConfigError extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(`${key}: ${message}`);
    this.name = 'ConfigError';
  }
}

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

/** TypeBox's messages, said as what is allowed. */
const PHRASES: [RegExp, string][] = [
  [/^Unexpected property$/, 'unknown key'],
  [/^Expected string length greater or equal to (\d+)$/, 'must be at least $1 characters'],
  [/^Expected string length less or equal to (\d+)$/, 'must be at most $1 characters'],
  [/^Expected (?:number|integer) to be greater or equal to (\S+)$/, 'must be at least $1'],
  [/^Expected (?:number|integer) to be less or equal to (\S+)$/, 'must be at most $1'],
  [/^Expected (?:number|integer) to be greater than (\S+)$/, 'must be more than $1'],
  [/^Expected null$/, 'null'],
  [/^Expected '(.*)'$/, '"$1"'],
  [
    /^Expected string to match '\^\[\^\\s\/@\]\+\$'$/,
    'must be a host name (no spaces, "/" or "@")',
  ],
];

function phrase(message: string): string {
  for (const [pattern, text] of PHRASES)
    if (pattern.test(message)) return message.replace(pattern, text);
  return message.charAt(0).toLowerCase() + message.slice(1);
}

function describeError(error: ValueError): string {
  if (error.errors.length === 0) return phrase(error.message);
  // A union: say what each alternative would have accepted.
  const options = error.errors.map((branch) => {
    const first = branch.First();
    return first ? phrase(first.message) : 'valid';
  });
  const values = options.filter((o) => /^(null|".*")$/.test(o));
  const rules = options.filter((o) => !values.includes(o));
  const choice =
    values.length === 0 ? '' : values.length === 1 ? values[0]! : `one of ${values.join(', ')}`;
  if (rules.length === 0) return `must be ${choice}`;
  return choice ? `${rules.join(' and ')}, or ${choice}` : rules.join(' and ');
}

function validate(candidate: unknown): RawConfig {
  if (matches(ConfigSchema, candidate)) return candidate as RawConfig;
  // TypeBox explains it best (which key, what each alternative accepts); loaded only for this.
  const { Value } = createRequire(import.meta.url)(
    '@sinclair/typebox/value',
  ) as typeof import('@sinclair/typebox/value');
  const first = Value.Errors(ConfigSchema, candidate).First();
  if (!first) throw new Error('the config check and TypeBox disagree about this config');
  const key = first.path.replace(/^\//, '').replaceAll('/', '.') || '(root)';
  throw new ConfigError(key, describeError(first));
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

function requireString(options: Json, key: string, at: string, optional = false): void {
  const value = options[key];
  if (value === undefined && optional) return;
  if (typeof value !== 'string' || value.length === 0) {
    throw new ConfigError(`${at}.options.${key}`, 'expected a non-empty string');
  }
}

const PLATFORM_OPTIONS: Record<PlatformConfig['type'], (options: Json, at: string) => void> = {
  webhook: (options, at) => {
    requireString(options, 'url', at);
    requireString(options, 'secret', at);
    if (secretKey(options.secret as string) === null) {
      throw new ConfigError(
        `${at}.options.secret`,
        `expected a Standard Webhooks secret: "whsec_" and the base64 of at least ${MIN_KEY_BYTES} random bytes (e.g. "whsec_$(openssl rand -base64 32)")`,
      );
    }
    if (!/^https?:\/\//.test(options.url as string)) {
      throw new ConfigError(`${at}.options.url`, 'expected an http(s) URL');
    }
    allowOnly(options, ['url', 'secret'], at);
  },
  telegram: (options, at) => {
    requireString(options, 'token', at);
    requireString(options, 'apiBase', at, true);
    checkPollSeconds(options, at);
    allowOnly(options, ['token', 'apiBase', 'pollTimeoutSeconds'], at);
  },
  matrix: (options, at) => {
    requireString(options, 'homeserver', at);
    requireString(options, 'accessToken', at);
    requireString(options, 'userId', at);
    if (!/^https?:\/\//.test(options.homeserver as string))
      throw new ConfigError(`${at}.options.homeserver`, 'expected an http(s) URL');
    if (!/^@[^:]+:.+$/.test(options.userId as string))
      throw new ConfigError(`${at}.options.userId`, 'expected a Matrix user id, "@name:server"');
    checkPollSeconds(options, at);
    allowOnly(options, ['homeserver', 'accessToken', 'userId', 'pollTimeoutSeconds'], at);
  },
  slack: (options, at) => {
    requireString(options, 'botToken', at);
    requireString(options, 'appToken', at, true);
    requireString(options, 'signingSecret', at, true);
    requireString(options, 'apiBase', at, true);
    if (options.appToken !== undefined && !(options.appToken as string).startsWith('xapp-'))
      throw new ConfigError(`${at}.options.appToken`, 'expected an app-level token ("xapp-…")');
    if (options.apiBase !== undefined && !/^https?:\/\//.test(options.apiBase as string))
      throw new ConfigError(`${at}.options.apiBase`, 'expected an http(s) URL');
    allowOnly(options, ['botToken', 'appToken', 'signingSecret', 'apiBase'], at);
  },
  discord: (options, at) => {
    requireString(options, 'botToken', at);
    requireString(options, 'apiBase', at, true);
    requireString(options, 'gatewayUrl', at, true);
    if (options.apiBase !== undefined && !/^https?:\/\//.test(options.apiBase as string))
      throw new ConfigError(`${at}.options.apiBase`, 'expected an http(s) URL');
    if (options.gatewayUrl !== undefined && !/^wss?:\/\//.test(options.gatewayUrl as string))
      throw new ConfigError(`${at}.options.gatewayUrl`, 'expected a ws(s) URL');
    allowOnly(options, ['botToken', 'apiBase', 'gatewayUrl'], at);
  },
};

function checkPollSeconds(options: Json, at: string): void {
  const poll = options.pollTimeoutSeconds;
  if (poll !== undefined && (typeof poll !== 'number' || poll < 0 || poll > 600)) {
    throw new ConfigError(`${at}.options.pollTimeoutSeconds`, 'expected a number from 0 to 600');
  }
}

function allowOnly(options: Json, keys: string[], at: string): void {
  for (const key of Object.keys(options)) {
    if (!keys.includes(key)) throw new ConfigError(`${at}.options.${key}`, 'unknown key');
  }
}

function resolvePlatforms(raw: RawConfig['platforms']): PlatformConfig[] {
  const seen = new Set<string>();
  return raw.map((p, i) => {
    const at = `platforms.${i}`;
    if (seen.has(p.name))
      throw new ConfigError(`${at}.name`, `duplicate platform name "${p.name}"`);
    seen.add(p.name);
    PLATFORM_OPTIONS[p.type](p.options, at);
    return {
      name: p.name,
      type: p.type,
      enabled: p.enabled ?? true,
      homeChannel: p.homeChannel ?? null,
      options: p.options,
      breaker: { ...DEFAULT_BREAKER, ...p.breaker },
    };
  });
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
