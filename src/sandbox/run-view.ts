// The view of one sandboxed run (docs/sandbox.md): hidden, what gatehouse keeps and every
// other task's (the data dir, the config's directory, the workspaces root, every repository, the
// daemon user's home); bound read-only, what the run needs from the host (its program and the
// installation it belongs to, its run folder, the directories of its PATH); bound writable, its
// workspace and its home; then the operator's own paths, and its worktree's git view.
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, resolve, sep } from 'node:path';
import type { Config, Profile } from '../config/schema.js';
import { within, type Mount, type SandboxView } from './view.js';

export interface RunViewRequest {
  config: Pick<Config, 'dataDir' | 'source' | 'workspaces'>;
  profile: Profile;
  runDir: string;
  env: Record<string, string>;
  cwd: string;
  /** The run's workspace (writable), or null. */
  workspace: string | null;
  /** Its worktree's git view (workspaces/git-view.ts), or none. */
  gitMounts: Mount[];
}

/** The root of the installation a program belongs to: the folder holding its node_modules. */
function installationOf(program: string): string[] {
  let real: string;
  try {
    real = realpathSync(program);
  } catch {
    return [];
  }
  const parts = real.split(sep);
  const modules = parts.indexOf('node_modules');
  const root = modules > 0 ? parts.slice(0, modules).join(sep) : dirname(real);
  return [root, dirname(program)];
}

/** The program's path: as given when it has a slash, else the first match on PATH. */
function programPath(program: string, path: string | undefined): string | null {
  if (program.includes('/')) return program;
  for (const dir of (path ?? '').split(delimiter))
    if (dir && isAbsolute(dir)) {
      const candidate = resolve(dir, program);
      try {
        realpathSync(candidate);
        return candidate;
      } catch {
        // not here
      }
    }
  return null;
}

export function runView(req: RunViewRequest): SandboxView {
  const { config, profile } = req;
  const hidden = [
    config.dataDir,
    ...(config.source ? [dirname(config.source)] : []),
    config.workspaces.root,
    ...Object.values(config.workspaces.repos).map((r) => r.path),
    homedir(),
    ...profile.sandbox.hidden,
  ];
  const masked = (path: string) => within(path, '/tmp') || hidden.some((h) => within(path, h));
  const mounts: Mount[] = hidden.map((dest) => ({ op: 'hide', dest }));
  const read = (path: string) => mounts.push({ op: 'read', src: path, dest: path });
  const write = (path: string) => mounts.push({ op: 'write', src: path, dest: path });
  const program = programPath(profile.command[0]!, req.env.PATH);
  if (program) for (const path of installationOf(program)) if (masked(path)) read(path);
  for (const dir of (req.env.PATH ?? '').split(delimiter))
    if (dir && isAbsolute(dir) && masked(dir)) read(dir);
  // A command's run folder is where it leaves result.json; an agent's verdict is its output,
  // written by the wrapper outside: its folder is read-only.
  if (profile.agent) read(req.runDir);
  else write(req.runDir);
  if (req.workspace) write(req.workspace);
  else if (masked(req.cwd)) read(req.cwd);
  if (req.env.HOME) write(req.env.HOME);
  for (const path of profile.sandbox.readOnly) read(path);
  for (const path of profile.sandbox.writable) write(path);
  mounts.push(...req.gitMounts);
  return { network: profile.sandbox.network, mounts, cwd: req.cwd };
}
