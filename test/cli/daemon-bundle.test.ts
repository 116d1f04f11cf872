// `gatehouse run` loads the daemon from its bundle; a bundle that is missing, damaged or not the
// daemon's exits 78 saying to build.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DAEMON_BUNDLE, loadDaemon } from '../../src/cli/daemon-loader.js';
import { ROOT, tempDir } from '../helpers/daemon.js';

function fakeBundle(body: string) {
  const bundle = join(tempDir(), 'daemon.cjs');
  writeFileSync(bundle, body);
  return { bundle };
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

/** Loads the real bundle in a node of its own, then runs `then`. */
function loadInChild(then = '') {
  return spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { loadDaemon, DAEMON_BUNDLE } from '${LOADER}';
       const runDaemon = loadDaemon(DAEMON_BUNDLE);
       process.stdout.write(typeof runDaemon);
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
       const runDaemon = loadDaemon(${JSON.stringify(bundle)});
       try {
         await runDaemon({ overrides: ${JSON.stringify({ ...overrides, port: 0 })}, replace: false });
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
  it("loads PostgreSQL's driver only for a board on PostgreSQL, and its chunk shares the bundle", () => {
    // After the loader's line, a second one: whether pg was loaded before and after the chunk.
    const child = loadInChild(
      `const require = (await import('node:module')).createRequire(DAEMON_BUNDLE);
       const pgLoaded = () => Object.keys(require.cache).some((k) => k.includes('/node_modules/pg/'));
       const before = pgLoaded();
       const chunk = require('./daemon-postgres.cjs');
       process.stdout.write('\\n' + JSON.stringify({
         before, after: pgLoaded(),
         store: typeof chunk.open_exports.openPostgresStore,
         same: require(DAEMON_BUNDLE).runDaemon === runDaemon,
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

  it('runs the daemon the bundle exports', async () => {
    const { bundle } = fakeBundle(RUNS);
    expect(await loadDaemon(bundle)({ overrides: {}, replace: true })).toBe(
      'ran with {"overrides":{},"replace":true}',
    );
  });

  it('says to build when the bundle is missing or is not the daemon', () => {
    const missing = join(tempDir(), 'daemon.cjs');
    // 78: systemd does not restart it (RestartPreventExitStatus), since only a build can help.
    expect(() => loadDaemon(missing)).toThrow(
      expect.objectContaining({
        exitCode: 78,
        message: expect.stringMatching(/daemon\.cjs cannot be read \(ENOENT\): run npm run build/),
      }),
    );
    const { bundle } = fakeBundle('exports.somethingElse = 1;\n');
    expect(() => loadDaemon(bundle)).toThrow(
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
    expect(() => loadDaemon(truncated.bundle)).toThrow(
      expect.objectContaining({
        exitCode: 78,
        message: expect.stringMatching(
          /is damaged or incomplete \(SyntaxError: .*run npm run build$/,
        ),
      }),
    );
  });
});
