// The fence keeper says it is up, and leaves once its daemon is gone with nothing to guard.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KEEPER_UP } from '../../src/proc/fence-protocol.js';
import { tempDir } from '../helpers/daemon.js';

describe('the fence keeper at its start', () => {
  it('says it is up, and leaves at once when its daemon is gone and it guards nothing', () => {
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
  });
});
