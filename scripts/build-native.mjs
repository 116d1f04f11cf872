#!/usr/bin/env node
// Builds gatehouse's process starter (native/spawn.c, see src/proc/start-process.ts) with
// node-gyp, against the headers of the Node that runs this, into dist/native/. Linux only; a
// starter newer than its sources is kept. Run by `npm run build` (npm puts its node-gyp in the
// environment); a build that fails fails the build: the daemon cannot start workers without it.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const SOURCES = [
  'native/spawn.c',
  'native/run-folder.c',
  'native/proc-scan.c',
  'native/napi-util.c',
  'native/napi-util.h',
  'native/binding.gyp',
].map((f) => join(ROOT, f));
const BUILT = join(ROOT, 'native/build/Release/start_process.node');
const OUT = join(ROOT, 'dist/native/start_process.node');

const mtime = (path) => statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? -1;

if (process.platform !== 'linux') process.exit(0);
if (mtime(OUT) > Math.max(...SOURCES.map(mtime))) process.exit(0);

const gyp = process.env.npm_config_node_gyp;
const [cmd, args] = gyp ? [process.execPath, [gyp]] : ['node-gyp', []];
const built = spawnSync(cmd, [...args, 'rebuild', '--loglevel=warn'], {
  cwd: join(ROOT, 'native'),
  stdio: ['ignore', 'ignore', 'inherit'],
});
if (built.status !== 0) {
  process.stderr.write(
    `error: gatehouse's process starter did not build (${built.error?.message ?? `node-gyp exit ${built.status}`}): it needs python3, make and a C compiler, as better-sqlite3 does\n`,
  );
  process.exit(1);
}
mkdirSync(join(ROOT, 'dist/native'), { recursive: true });
// A new file renamed into place: a daemon running from this install keeps the one it mapped
// (written over in place, it died with SIGILL at its next start of a worker).
copyFileSync(BUILT, `${OUT}.new`);
renameSync(`${OUT}.new`, OUT);
