// Where the configuration file is, found without validating anything.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

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
