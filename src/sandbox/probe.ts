// Whether this host can run the sandboxed profiles (docs/sandbox.md), asked once at start:
// bubblewrap installed, the namespaces it makes allowed here, each profile's program found. A
// host that cannot is a configuration error naming the key that turns the sandbox off.
import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Config } from '../config/schema.js';

export interface SandboxProblem {
  key: string;
  message: string;
}

function onPath(program: string, path: string | undefined): string | null {
  if (program.includes('/')) return canRun(program) ? program : null;
  for (const dir of (path ?? '').split(delimiter)) {
    const candidate = join(dir, program);
    if (dir && canRun(candidate)) return candidate;
  }
  return null;
}

function canRun(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function sandboxProblem(
  config: Config,
  path = config.workerEnv.PATH,
): SandboxProblem | null {
  const sandboxed = Object.values(config.workers.profiles).filter(
    (p) => p.sandbox.kind === 'bwrap',
  );
  const first = sandboxed[0];
  if (!first) return null;
  const key = `workers.profiles.${first.name}.sandbox.kind`;
  const bwrap = onPath('bwrap', path);
  if (!bwrap)
    return {
      key,
      message: `bubblewrap is not installed ("bwrap" is not on PATH): install the Debian package "bubblewrap", or set ${key} to "none" (every agent profile is sandboxed unless it says so)`,
    };
  try {
    execFileSync(
      bwrap,
      [
        '--unshare-pid',
        '--unshare-ipc',
        '--unshare-uts',
        '--cap-drop',
        'ALL',
        '--ro-bind',
        '/',
        '/',
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--',
        'true',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 },
    );
  } catch (err) {
    const said = String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim();
    return {
      key,
      message: `bubblewrap cannot make a sandbox on this host (${said || 'no message'}): user namespaces may be off (sysctl kernel.unprivileged_userns_clone), or the service's hardening refuses them (see docs/sandbox.md); or set ${key} to "none"`,
    };
  }
  for (const profile of sandboxed) {
    const program = profile.command[0]!;
    if (!onPath(program, path))
      return {
        key: `workers.profiles.${profile.name}.${profile.agent ? 'agent.bin' : 'command'}`,
        message: `"${program}" is not found${program.includes('/') ? '' : ' on PATH'}: its sandboxed runs could not start`,
      };
  }
  return null;
}
