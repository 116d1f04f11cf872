// The fence keeper loads gatehouse's native module (its process table listing) before it says it
// is up: at the fence, when it must end a run, the install it came from may have changed.
import { spawnSync } from 'node:child_process';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KEEPER_UP } from '../../src/proc/fence-protocol.js';
import { tempDir } from '../helpers/daemon.js';

describe('the fence keeper at its start', () => {
  it('says it is up only with the native module loaded, and names the module when it cannot load it', () => {
    const dist = join(import.meta.dirname, '../../dist');
    const run = (root: string) =>
      spawnSync(process.execPath, [join(root, 'proc/fence-keeper.js'), tempDir()], {
        encoding: 'utf8',
        // Its daemon gone at once (stdin closed) and nothing guarded: a keeper that is up leaves.
        input: '',
        timeout: 30_000,
      });

    const up = run(dist);
    expect(up.status).toBe(0);
    expect(up.stdout).toContain(KEEPER_UP);

    // The same keeper from an install without the module (removed, or never built).
    const copy = join(tempDir(), 'dist');
    cpSync(join(dist, 'proc'), join(copy, 'proc'), { recursive: true });
    const broken = run(copy);
    expect(broken.status).toBe(1);
    expect(broken.stdout).not.toContain(KEEPER_UP);
    expect(broken.stderr).toContain(`cannot load ${join(copy, 'native/start_process.node')}`);
  });
});
