// Which host of the board this data dir is: host.json, so that a daemon restarted within its
// lease takes its host id (and its runs) back.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeJsonAtomic } from '../dispatch/run-files.js';

/** The file that names this data dir's host on the board. */
export const HOST_FILE = 'host.json';

export interface HostIdentity {
  id: number;
  name: string;
}

/** The host this data dir was, or null (none yet, or a file that is not ours). */
export function readHostIdentity(dataDir: string): HostIdentity | null {
  try {
    const parsed = JSON.parse(readFileSync(join(dataDir, HOST_FILE), 'utf8')) as {
      id?: unknown;
      name?: unknown;
    };
    return Number.isSafeInteger(parsed.id) && typeof parsed.name === 'string'
      ? { id: parsed.id as number, name: parsed.name }
      : null;
  } catch {
    return null;
  }
}

/** Records it; throws what the write throws. */
export function writeHostIdentity(dataDir: string, host: HostIdentity): void {
  writeJsonAtomic(join(dataDir, HOST_FILE), host);
}
