// `gatehouse run` loads the daemon from its bundle with the code cache the build recorded; a
// cache that does not fit only costs start-up time.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DAEMON_BUNDLE, DAEMON_CODE_CACHE, loadDaemon } from '../../src/cli/daemon-loader.js';
import { identityOf } from '../../src/proc/index.js';
import { ROOT, tempDir } from '../helpers/daemon.js';

function fakeBundle(body: string) {
  const dir = tempDir();
  const bundle = join(dir, 'daemon.cjs');
  writeFileSync(bundle, body);
  return { bundle, cache: `${bundle}.cache` };
}

/** The real bundle's files (the entry and the chunks it loads) copied to `dir`, but for `without`. */
function copyBundle(dir: string, without: string[] = []) {
  const from = dirname(DAEMON_BUNDLE);
  for (const name of readdirSync(from))
    if (!without.includes(name)) copyFileSync(join(from, name), join(dir, name));
  return join(dir, 'daemon.cjs');
}

const RUNS = 'exports.runDaemon = async (opts) => `ran with ${JSON.stringify(opts)}`;\n';
const LOADER = pathToFileURL(join(ROOT, 'dist/cli/daemon-loader.js')).href;

/** Loads the real bundle in a node of its own (a damaged cache could crash it natively). */
function loadInChild(cache: string, trial: string, then = '') {
  return spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { loadDaemon, DAEMON_BUNDLE } from '${LOADER}';
       const d = loadDaemon(DAEMON_BUNDLE, ${JSON.stringify(cache)}, ${JSON.stringify(trial)});
       process.stdout.write(JSON.stringify({ cached: d.cached, skipped: d.cacheSkipped }));
       ${then}`,
    ],
    { encoding: 'utf8', timeout: 30_000 },
  );
}

/** Runs `gatehouse run` from `bundle` in a node of its own: the exit error it threw, if any. */
function runBundle(bundle: string, overrides: object) {
  const child = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { loadDaemon } from '${LOADER}';
       const d = loadDaemon(${JSON.stringify(bundle)}, ${JSON.stringify(`${bundle}.cache`)}, null);
       try {
         await d.runDaemon({ overrides: ${JSON.stringify({ ...overrides, port: 0 })}, replace: false });
       } catch (err) {
         process.stdout.write(JSON.stringify({ exitCode: err.exitCode, message: err.message }));
       }`,
    ],
    { encoding: 'utf8', timeout: 30_000 },
  );
  return {
    ...(JSON.parse(child.stdout || '{}') as { exitCode?: number; message?: string }),
    stderr: child.stderr,
  };
}

describe("the daemon's bundle", () => {
  it('is loaded from the code cache the build recorded, by a node started as the unit starts it', () => {
    const trial = join(tempDir(), 'code-cache.trial');
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { loadDaemon, DAEMON_BUNDLE, DAEMON_CODE_CACHE } from '${LOADER}'; const d = loadDaemon(DAEMON_BUNDLE, DAEMON_CODE_CACHE, ${JSON.stringify(trial)}); process.stdout.write(String(d.cached) + ' ' + typeof d.runDaemon)`,
      ],
      { encoding: 'utf8' },
    );
    expect(out).toBe('true function');
  });

  it("loads PostgreSQL's driver only for a board on PostgreSQL, and its chunk shares the bundle", () => {
    // After the loader's line, a second one: whether pg was loaded before and after the chunk.
    const child = loadInChild(
      DAEMON_CODE_CACHE,
      join(tempDir(), 'code-cache.trial'),
      `const require = (await import('node:module')).createRequire(DAEMON_BUNDLE);
       const pgLoaded = () => Object.keys(require.cache).some((k) => k.includes('/node_modules/pg/'));
       const before = pgLoaded();
       const chunk = require('./daemon-postgres.cjs');
       process.stdout.write('\\n' + JSON.stringify({
         before, after: pgLoaded(),
         store: typeof chunk.store_exports.openPostgresStore,
         same: require(DAEMON_BUNDLE).runDaemon === d.runDaemon,
       }));`,
    );
    expect(child.status).toBe(0);
    expect(JSON.parse(child.stdout.split('\n')[1] ?? '')).toEqual({
      before: false,
      after: true,
      store: 'function',
      same: true,
    });
  });

  it('exits 78 naming what to run when a board on PostgreSQL finds the bundle without its PostgreSQL chunk', () => {
    // A bundle beside the real one (its packages resolve as the real one's do), its chunk left out.
    const dir = mkdtempSync(join(ROOT, 'dist/bundle-without-chunk-'));
    try {
      const bundle = copyBundle(dir, ['daemon-postgres.cjs']);
      const dataDir = tempDir();
      const config = join(dataDir, 'config.json');
      writeFileSync(
        config,
        JSON.stringify({ store: { kind: 'postgres', url: 'postgres://gh@127.0.0.1:1/none' } }),
      );
      const out = runBundle(bundle, { dataDir, config });
      expect(out.exitCode, out.stderr).toBe(78);
      expect(out.message).toContain('MODULE_NOT_FOUND');
      expect(out.message).toContain('npm run build');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exits 78 naming what to run when the build did not make the process starter', () => {
    // A package of its own (its package.json and bundle) inside the real one, whose packages
    // it resolves as the real bundle does: its dist/ has no starter.
    const outer = mkdtempSync(join(ROOT, 'dist/package-without-starter-'));
    try {
      mkdirSync(join(outer, 'dist/bundle'), { recursive: true });
      const bundle = copyBundle(join(outer, 'dist/bundle'));
      // What the bundle reads as it loads: the version, the dashboard's page.
      copyFileSync(join(ROOT, 'package.json'), join(outer, 'package.json'));
      cpSync(join(ROOT, 'public'), join(outer, 'public'), { recursive: true });
      const dataDir = tempDir();
      const out = runBundle(bundle, { dataDir });
      expect(out.exitCode, out.stderr).toBe(78);
      expect(out.message).toMatch(
        /process starter \(.*start_process\.node\) cannot be loaded \(.*\): run npm ci, then npm run build/,
      );
      // Nothing of the data dir was taken: no pid file, no board.
      expect(existsSync(join(dataDir, 'gatehouse.pid'))).toBe(false);
      expect(existsSync(join(dataDir, 'gatehouse.db'))).toBe(false);
    } finally {
      rmSync(outer, { recursive: true, force: true });
    }
  });

  it('never feeds V8 a cache whose payload was damaged, even with the bundle’s digest intact', () => {
    const cache = readFileSync(DAEMON_CODE_CACHE);
    // The first 32 bytes (the bundle's digest) are kept; bytes in the middle of the payload are
    // not what the build recorded: given to V8, this crashed node with SIGTRAP or SIGSEGV.
    const middle = Math.floor(cache.length / 2);
    for (let i = middle; i < middle + 64; i++) cache[i] = cache[i]! ^ 0x5a;
    const damaged = join(tempDir(), 'damaged.cache');
    writeFileSync(damaged, cache);
    const child = loadInChild(damaged, join(tempDir(), 'code-cache.trial'));
    expect({ status: child.status, signal: child.signal }).toEqual({ status: 0, signal: null });
    expect(JSON.parse(child.stdout)).toEqual({ cached: false, skipped: null });
  });

  it('never uses again a cache whose start died before serving', () => {
    const trial = join(tempDir(), 'code-cache.trial');
    // A start that dies natively after loading with the cache (as a bad cache would make it).
    const died = loadInChild(DAEMON_CODE_CACHE, trial, "process.kill(process.pid, 'SIGKILL');");
    expect(died.signal).toBe('SIGKILL');
    expect(JSON.parse(died.stdout)).toMatchObject({ cached: true });
    expect(existsSync(trial)).toBe(true);
    for (let i = 0; i < 2; i++) {
      const next = loadInChild(DAEMON_CODE_CACHE, trial);
      expect(next.status).toBe(0);
      const loaded = JSON.parse(next.stdout);
      expect(loaded.cached).toBe(false);
      expect(loaded.skipped).toMatch(/died before serving/);
    }
    // A mark left by a start that is still running (one being replaced) is not a dead start's.
    const live = readFileSync(trial, 'utf8').split(' ')[0]!;
    writeFileSync(trial, `${live} ${process.pid} ${identityOf(process.pid)!.startTime}\n`);
    expect(JSON.parse(loadInChild(DAEMON_CODE_CACHE, trial).stdout)).toMatchObject({
      cached: true,
    });
    // A start that got as far as serving clears its trial: the next one uses the cache.
    const fresh = join(tempDir(), 'code-cache.trial');
    const served = loadInChild(DAEMON_CODE_CACHE, fresh, 'd.trialPassed();');
    expect(JSON.parse(served.stdout)).toMatchObject({ cached: true });
    expect(existsSync(fresh)).toBe(false);
    expect(JSON.parse(loadInChild(DAEMON_CODE_CACHE, fresh).stdout)).toMatchObject({
      cached: true,
    });
  });

  it('runs without a cache, with a garbage one, and with one recorded for another bundle', async () => {
    const { bundle, cache } = fakeBundle(RUNS);
    const first = loadDaemon(bundle, cache);
    expect(first.cached).toBe(false);
    expect(await first.runDaemon({ overrides: {}, replace: false })).toBe(
      'ran with {"overrides":{},"replace":false}',
    );
    writeFileSync(cache, first.codeCache());
    const trial = join(tempDir(), 'code-cache.trial');
    const cached = loadDaemon(bundle, cache, trial);
    expect(cached.cached).toBe(true);
    cached.trialPassed();
    // Without a data dir to mark its trial in, a start does not risk the cache.
    expect(loadDaemon(bundle, cache).cached).toBe(false);

    writeFileSync(cache, Buffer.alloc(4096, 7));
    const garbage = loadDaemon(bundle, cache, trial);
    expect(garbage.cached).toBe(false);
    expect(await garbage.runDaemon({ overrides: {}, replace: true })).toMatch(/"replace":true/);

    writeFileSync(cache, first.codeCache());
    // Same length, other code: the cache names the bundle it was recorded for.
    writeFileSync(bundle, RUNS.replace('ran with', 'RAN WITH'));
    const other = loadDaemon(bundle, cache, trial);
    expect(other.cached).toBe(false);
    expect(await other.runDaemon({ overrides: {}, replace: false })).toMatch(/^RAN WITH/);
  });

  it('says to build when the bundle is missing or is not the daemon', () => {
    const missing = join(tempDir(), 'daemon.cjs');
    // 78: systemd does not restart it (RestartPreventExitStatus), since only a build can help.
    expect(() => loadDaemon(missing, `${missing}.cache`)).toThrow(
      expect.objectContaining({
        exitCode: 78,
        message: expect.stringMatching(/daemon\.cjs cannot be read \(ENOENT\): run npm run build/),
      }),
    );
    const { bundle, cache } = fakeBundle('exports.somethingElse = 1;\n');
    expect(() => loadDaemon(bundle, cache)).toThrow(
      expect.objectContaining({
        exitCode: 78,
        message: expect.stringMatching(/does not export runDaemon: run npm run build/),
      }),
    );
    // A bundle cut short (a full disk during the build, a copy interrupted) is a build error too,
    // not a crash with a source excerpt.
    // Cut just inside a block halfway through: a cut between two modules would still compile.
    const text = readFileSync(DAEMON_BUNDLE, 'utf8');
    const truncated = fakeBundle(text.slice(0, text.indexOf('{\n', text.length / 2) + 2));
    expect(() => loadDaemon(truncated.bundle, truncated.cache)).toThrow(
      expect.objectContaining({
        exitCode: 78,
        message: expect.stringMatching(
          /is damaged or incomplete \(SyntaxError: .*run npm run build$/,
        ),
      }),
    );
  });
});
