#!/usr/bin/env node
// Installs the pinned agent CLIs (scripts/agent-clis.json) from the npm registry into a cache
// outside the product's node_modules (about 400 MB each: users' `npm ci` stays light), once;
// prints each kind's program as `kind=path`. The suite runs it before the agent tests; an
// operator may too (`node scripts/install-agents.mjs [claude|codex]`).
// The cache: $GATEHOUSE_AGENT_CACHE, else $XDG_CACHE_HOME/gatehouse/agents, else ~/.cache/….
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const PINS = JSON.parse(readFileSync(join(import.meta.dirname, 'agent-clis.json'), 'utf8'));

export function agentCache() {
  return (
    process.env.GATEHOUSE_AGENT_CACHE ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'gatehouse', 'agents')
  );
}

/** The program of one pinned CLI, installed first if it is not yet. */
export function installAgent(kind) {
  const pin = PINS[kind];
  if (!pin) throw new Error(`no pinned agent CLI "${kind}" (scripts/agent-clis.json)`);
  const dir = join(agentCache(), `${pin.package.replace('/', '+')}@${pin.version}`);
  const bin = join(dir, 'node_modules', '.bin', pin.bin);
  const works = () =>
    existsSync(bin) &&
    spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 30_000 }).status === 0;
  if (works()) return bin;
  // Installed beside, then moved in whole: an install cut short is never taken for one.
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const npm = spawnSync(
    'npm',
    [
      'install',
      '--prefix',
      partial,
      '--no-audit',
      '--no-fund',
      '--no-save',
      '--loglevel=error',
      `${pin.package}@${pin.version}`,
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 15 * 60_000 },
  );
  if (npm.status !== 0) {
    rmSync(partial, { recursive: true, force: true });
    throw new Error(`npm install ${pin.package}@${pin.version} failed:\n${npm.stderr}`);
  }
  rmSync(dir, { recursive: true, force: true });
  renameSync(partial, dir);
  if (!works()) throw new Error(`${bin} --version does not answer after its install`);
  return bin;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const kinds = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(PINS);
  for (const kind of kinds) console.log(`${kind}=${installAgent(kind)}`);
}
