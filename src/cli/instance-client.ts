// Finding the running instance of a data dir (pid file, identity) and the URL to call it on.
import { join } from 'node:path';
import { ConfigError, loadConfig, type ConfigOverrides } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { ExitCode, ExitError } from '../gateway/exit-codes.js';
import { PID_FILE, ownerIsLive, readPidFile, type PidRecord } from '../gateway/pid-file.js';

export function cliConfig(overrides: ConfigOverrides): Config {
  try {
    return loadConfig(overrides);
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
