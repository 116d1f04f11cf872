// Where the configuration file and the data dir are, found without validating anything: the
// daemon's loader needs the data dir before the daemon's code (and the validator) is loaded.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defaultConfig } from './defaults.js';

export interface ConfigOverrides {
  config?: string | undefined;
  dataDir?: string | undefined;
  host?: string | undefined;
  port?: number | undefined;
}

/** The config file: --config, else $GATEHOUSE_CONFIG, else ./gatehouse.json if present. */
export function locateFile(
  overrides: ConfigOverrides,
  env: NodeJS.ProcessEnv,
  cwd: string,
): string | null {
  const named = overrides.config ?? env.GATEHOUSE_CONFIG;
  if (named) return resolve(cwd, named);
  const local = resolve(cwd, 'gatehouse.json');
  return existsSync(local) ? local : null;
}

/**
 * The data dir the configuration names (flag, environment, file, default: the same order as
 * loadConfig), or null when the file cannot be read or holds no usable dataDir; loadConfig
 * says what is wrong with it later.
 */
export function locateDataDir(
  overrides: ConfigOverrides,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): string | null {
  let named = overrides.dataDir ?? (env.GATEHOUSE_DATA_DIR || undefined);
  if (named === undefined) {
    const file = locateFile(overrides, env, cwd);
    if (file) {
      try {
        const dataDir = (JSON.parse(readFileSync(file, 'utf8')) as { dataDir?: unknown }).dataDir;
        if (dataDir !== undefined && (typeof dataDir !== 'string' || dataDir === '')) return null;
        named = dataDir;
      } catch {
        return null;
      }
    }
  }
  return resolve(cwd, named ?? defaultConfig().dataDir);
}
