// `gatehouse board backup FILE`: a consistent copy of a live SQLite board, taken while its daemon
// creates and completes tasks, that a daemon opens with every task committed before it began.
import { copyFileSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api } from '../helpers/app.js';
import { runCli, startDaemon, tempDir, waitServing, writeConfig } from '../helpers/daemon.js';
import { waitFor } from '../helpers/wait.js';

const quick = {
  command: [
    '/bin/sh',
    '-c',
    `printf '{"status":"done","summary":"ok"}' > "$GATEHOUSE_RUN_DIR/result.json"`,
  ],
  maxConcurrent: 20,
};

describe('gatehouse board backup', () => {
  it('copies a board while 200 tasks are created and completed; the copy opens with every task committed before it', async () => {
    const dataDir = tempDir();
    const config = writeConfig(tempDir(), {
      workers: {
        tickSeconds: 0.1,
        maxConcurrent: 20,
        defaultProfile: 'quick',
        profiles: { quick },
      },
    });
    const daemon = startDaemon({ dataDir, config });
    const url = await waitServing(dataDir, daemon.pid);
    const committed: string[] = [];
    // Tasks created (and completed by the workers) until the backup is done, 200 at least.
    let backedUp = false;
    const creator = (async () => {
      for (let i = 0; !backedUp || i < 200; i++) {
        const res = await api(url, 'POST', '/tasks', { title: `t${i}` });
        expect(res.status).toBe(201);
        committed.push(res.body.id as string);
      }
    })();
    await waitFor('some tasks created', () => committed.length >= 50);
    const before = [...committed];
    const file = join(tempDir(), 'board.db');
    const backup = await runCli([
      'board',
      'backup',
      file,
      '--data-dir',
      dataDir,
      '--config',
      config,
      '--json',
    ]);
    expect(backup.stderr).toBe('');
    expect(backup.code).toBe(0);
    const said = JSON.parse(backup.stdout);
    expect(said.to).toBe(file);
    expect(said.tasks).toBeGreaterThanOrEqual(before.length);
    backedUp = true;
    const duringBackup = committed.length - before.length;
    await creator;
    // Taken while the daemon was busy.
    expect(duringBackup).toBeGreaterThan(0);
    // Nothing but the copy is left beside it.
    expect(readdirSync(join(file, '..'))).toEqual(['board.db']);
    // A second backup never overwrites the first.
    const again = await runCli([
      'board',
      'backup',
      file,
      '--data-dir',
      dataDir,
      '--config',
      config,
    ]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('a backup never overwrites a file');

    // Restored: a daemon on a new data dir opens it with every task committed before it began.
    const restored = tempDir();
    copyFileSync(file, join(restored, 'gatehouse.db'));
    const second = startDaemon({ dataDir: restored, config });
    const url2 = await waitServing(restored, second.pid);
    for (const id of before) expect((await api(url2, 'GET', `/tasks/${id}`)).status).toBe(200);
    const counts = (await api(url2, 'GET', '/tasks/counts')).body;
    const total = Object.values(counts.counts ?? counts).reduce(
      (a: number, b) => a + (typeof b === 'number' ? b : 0),
      0,
    );
    expect(total).toBe(said.tasks);
  });

  it('refuses a board on PostgreSQL, naming pg_dump, and a directory that does not exist', async () => {
    const config = writeConfig(tempDir(), {
      store: { kind: 'postgres', url: 'postgres://nobody@127.0.0.1:1/none' },
    });
    const pg = await runCli(['board', 'backup', join(tempDir(), 'x.db'), '--config', config]);
    expect(pg.code).toBe(1);
    expect(pg.stderr).toContain('pg_dump');
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'gatehouse.db'), '');
    const nowhere = join(tempDir(), 'missing', 'x.db');
    const bad = await runCli(['board', 'backup', nowhere, '--data-dir', dataDir]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('no such directory');
    expect(existsSync(nowhere)).toBe(false);
  });
});
