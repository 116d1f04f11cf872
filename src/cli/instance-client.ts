// Finding the running instance of a data dir (pid file, identity) and the URL to call it on.
import { readApiTokenFile } from '../gateway/api-token.js';
import { join } from 'node:path';
import { ConfigError, loadConfig, type ConfigOverrides } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { ExitCode, ExitError } from '../gateway/exit-codes.js';
import { PID_FILE, ownerIsLive, readPidFile, type PidRecord } from '../gateway/pid-file.js';
import { usageError } from './args.js';

export function cliConfig(overrides: ConfigOverrides): Config {
  try {
    return loadConfig(overrides, process.env, process.cwd(), { secrets: false });
  } catch (err) {
    if (err instanceof ConfigError)
      throw new ExitError(ExitCode.config, `configuration error: ${err.message}`);
    throw err;
  }
}

/** The live owner of the configured data dir, or null. */
export function findInstance(config: Config): PidRecord | null {
  const record = readPidFile(join(config.dataDir, PID_FILE));
  return record && ownerIsLive(record, config.dataDir) ? record : null;
}

/** Says which data dir was looked at and how to point a command at another one. */
export function notRunning(dataDir: string): string {
  return `no instance is running for the data dir ${dataDir}; start one with 'gatehouse run', or point this command at the running one with --data-dir D, --config F or GATEHOUSE_DATA_DIR`;
}

export function requireInstance(config: Config): PidRecord {
  const record = findInstance(config);
  if (!record) throw new ExitError(ExitCode.failure, notRunning(config.dataDir));
  return record;
}

function connectHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

export function baseUrl(config: Config, record: PidRecord): string {
  return `http://${connectHost(config.server.host)}:${record.port}`;
}

/** The flags of commands that talk to a daemon: which one (data dir, or a URL) and the token. */
export const targetFlags = {
  config: { type: 'string' },
  'data-dir': { type: 'string' },
  url: { type: 'string' },
  token: { type: 'string' },
} as const;

export interface TargetValues {
  config?: string | undefined;
  'data-dir'?: string | undefined;
  url?: string | undefined;
  token?: string | undefined;
}

/** Where a command reaches the daemon and with what token. */
export interface Target {
  /** Where the daemon answers; null when no instance runs for the data dir and none was named. */
  url: string | null;
  token: string | null;
  config: Config;
  /** The local instance found by its data dir; null when given a URL. */
  record: PidRecord | null;
}

/** A daemon's URL from --url or GATEHOUSE_URL: http(s), nothing after the host but a path. */
function parseUrl(text: string, from: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError(`${from} expects a URL like http://gatehouse.internal:8377, got "${text}"`);
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.search || url.hash || url.username)
    throw usageError(
      `${from} expects an http(s) URL without credentials, query or fragment, got "${text}"`,
    );
  return url.toString().replace(/\/$/, '');
}

/**
 * --url U (else GATEHOUSE_URL) names a daemon anywhere; without one, the running instance of the
 * configured data dir is the target. The token: --token, else GATEHOUSE_TOKEN, else api.token,
 * else the one the daemon made in its data dir (<dataDir>/api-token).
 */
export function resolveTarget(values: TargetValues, env: NodeJS.ProcessEnv): Target {
  const config = cliConfig({ config: values.config, dataDir: values['data-dir'] });
  // A daemon with a sandboxed profile and no token configured made its own in the data dir.
  const token = values.token ?? config.api.token ?? readApiTokenFile(config.dataDir);
  const given = values.url ?? env.GATEHOUSE_URL;
  if (given !== undefined) {
    const url = parseUrl(given, values.url !== undefined ? '--url' : 'GATEHOUSE_URL');
    return { url, token, config, record: null };
  }
  const record = findInstance(config);
  return { url: record ? baseUrl(config, record) : null, token, config, record };
}

/** What a 401 means to the person at the terminal. */
export function unauthorized(url: string): ExitError {
  return new ExitError(
    ExitCode.failure,
    `unauthorized: the daemon at ${url} asks for its API token; export GATEHOUSE_TOKEN, set api.token in the config file (--config F), or pass --token`,
  );
}
