// `gatehouse run` loads the daemon from its bundle with the code cache the build recorded; a
// cache that does not fit only costs start-up time.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadDaemon } from '../../src/cli/daemon-loader.js';
import { ROOT, tempDir } from '../helpers/daemon.js';

function fakeBundle(body: string) {
  const dir = tempDir();
  const bundle = join(dir, 'daemon.cjs');
  writeFileSync(bundle, body);
  return { bundle, cache: `${bundle}.cache` };
}

const RUNS = 'exports.runDaemon = async (opts) => `ran with ${JSON.stringify(opts)}`;\n';

describe("the daemon's bundle", () => {
  it('is loaded from the code cache the build recorded, with the flags the unit gives node', () => {
    const loader = pathToFileURL(join(ROOT, 'dist/cli/daemon-loader.js')).href;
    const out = execFileSync(
      process.execPath,
      [
        '--max-semi-space-size=1',
        '--input-type=module',
        '-e',
        `import { loadDaemon } from '${loader}'; const d = loadDaemon(); process.stdout.write(String(d.cached) + ' ' + typeof d.runDaemon)`,
      ],
      { encoding: 'utf8' },
    );
    expect(out).toBe('true function');
  });

  it('runs without a cache, with a garbage one, and with one recorded for another bundle', async () => {
    const { bundle, cache } = fakeBundle(RUNS);
    const first = loadDaemon(bundle, cache);
    expect(first.cached).toBe(false);
    expect(await first.runDaemon({ overrides: {}, replace: false })).toBe(
      'ran with {"overrides":{},"replace":false}',
    );
    writeFileSync(cache, first.codeCache());
    expect(loadDaemon(bundle, cache).cached).toBe(true);

    writeFileSync(cache, Buffer.alloc(4096, 7));
    const garbage = loadDaemon(bundle, cache);
    expect(garbage.cached).toBe(false);
    expect(await garbage.runDaemon({ overrides: {}, replace: true })).toMatch(/"replace":true/);

    writeFileSync(cache, first.codeCache());
    // Same length, other code: the cache names the bundle it was recorded for.
    writeFileSync(bundle, RUNS.replace('ran with', 'RAN WITH'));
    const other = loadDaemon(bundle, cache);
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
  });
});
