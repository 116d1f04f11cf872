import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DatabaseError, openDatabase } from '../../src/kanban/store/sqlite/db.js';
import { MIGRATIONS } from '../../src/kanban/store/sqlite/migrations.js';
import { api, startGateway } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';

describe('the board database', () => {
  it('upgrades a database made by the first migration, keeping its rows; reopening is a no-op', () => {
    const path = join(tempDir(), 'gatehouse.db');
    const old = openDatabase(path, { migrateTo: 1 });
    expect(old.pragma('user_version', { simple: true })).toBe(1);
    old
      .prepare(
        "INSERT INTO tasks (id, title, status, created_at, updated_at, origin) VALUES ('t_000000000001', 'kept', 'ready', 1, 1, '{\"kind\":\"api\"}')",
      )
      .run();
    old.close();
    const upgraded = openDatabase(path);
    expect(upgraded.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    upgraded.close();
    const again = openDatabase(path);
    expect(again.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    expect(again.prepare('SELECT title FROM tasks').get()).toEqual({ title: 'kept' });
    expect(again.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(again.pragma('foreign_keys', { simple: true })).toBe(1);
    again.close();
  });

  it('repairs what an older version left inconsistent instead of refusing it or leaving it stuck', async () => {
    const dataDir = tempDir();
    const path = join(dataDir, 'gatehouse.db');
    const old = openDatabase(path, { migrateTo: 3 });
    old.pragma('foreign_keys = OFF');
    const insert = old.prepare(
      `INSERT INTO tasks (id, title, status, created_at, updated_at, origin, current_run_id, lease_expires_at)
       VALUES (?, ?, ?, 1, 1, '{"kind":"api"}', ?, ?)`,
    );
    insert.run('t_00000000000a', 'running, its run row gone', 'running', 'r_00000000dead', 5);
    insert.run('t_00000000000b', 'child of a deleted parent', 'ready', null, null);
    insert.run('t_00000000000c', 'waiting only on a deleted parent', 'todo', null, null);
    const link = old.prepare('INSERT INTO task_parents (task_id, parent_id) VALUES (?, ?)');
    link.run('t_00000000000b', 't_0000000gone0');
    link.run('t_00000000000c', 't_0000000gone1');
    old.close();

    const notes: string[] = [];
    openDatabase(path, { onRepair: (note) => notes.push(note) }).close();
    expect(notes).toHaveLength(2);
    expect(notes[0]).toMatch(/task_parents row that names a missing tasks row.*t_0000000gone0/);

    const gw = await startGateway({ workers: { maxConcurrent: 0 } }, { dataDir });
    const stuck = (await api(gw.url, 'GET', '/tasks/t_00000000000a')).body;
    expect(stuck).toMatchObject({ status: 'ready', currentRunId: null });
    const events = (await api(gw.url, 'GET', '/tasks/t_00000000000a/events')).body.events;
    expect(events.at(-1)).toMatchObject({ kind: 'reclaimed', runId: 'r_00000000dead' });
    expect(events.at(-1).payload.error).toMatch(/run r_00000000dead is missing/);
    expect((await api(gw.url, 'POST', '/tasks/t_00000000000a/archive')).status).toBe(200);
    const child = (await api(gw.url, 'GET', '/tasks/t_00000000000b')).body;
    expect(child).toMatchObject({ status: 'ready', parents: [] });
    // Waiting on nothing any more: promoted, with an event that says why.
    const waiting = (await api(gw.url, 'GET', '/tasks/t_00000000000c')).body;
    expect(waiting).toMatchObject({ status: 'ready', parents: [] });
    const promoted = (await api(gw.url, 'GET', '/tasks/t_00000000000c/events')).body.events;
    expect(promoted.at(-1)).toMatchObject({ kind: 'promoted' });
  });

  it('an upgrade that fails part of the way leaves the board as the older version had it', () => {
    const path = join(tempDir(), 'gatehouse.db');
    const old = openDatabase(path, { migrateTo: 2 });
    old
      .prepare(
        "INSERT INTO tasks (id, title, status, created_at, updated_at, origin) VALUES ('t_000000000001', 'kept', 'ready', 1, 1, '{\"kind\":\"api\"}')",
      )
      .run();
    // Migration 5 adds this column: it fails there, after 3 and 4 ran.
    old.exec('ALTER TABLE runs ADD COLUMN host TEXT');
    old.close();
    expect(() => openDatabase(path)).toThrow(/duplicate column name: host/);
    const after = openDatabase(path, { migrateTo: 2 });
    expect(after.pragma('user_version', { simple: true })).toBe(2);
    // Nothing of migrations 3 and 4 is left half-made beside the older schema.
    const tables = after
      .prepare("SELECT name FROM sqlite_master WHERE name IN ('inbound_deliveries', 'write_probe')")
      .all();
    expect(tables).toEqual([]);
    expect(after.prepare('SELECT title FROM tasks').get()).toEqual({ title: 'kept' });
    after.close();
  });

  it('refuses a file that is not a database, naming it and leaving it untouched', () => {
    const path = join(tempDir(), 'gatehouse.db');
    writeFileSync(path, "this is not sqlite, but it is somebody's data".repeat(100));
    const before = readFileSync(path);
    expect(() => openDatabase(path)).toThrow(DatabaseError);
    expect(() => openDatabase(path)).toThrow(path);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('refuses a schema newer than this version knows', () => {
    const path = join(tempDir(), 'gatehouse.db');
    openDatabase(path).close();
    const db = openDatabase(path);
    db.pragma(`user_version = ${MIGRATIONS.length + 1}`);
    db.close();
    expect(() => openDatabase(path)).toThrow(/newer than this gatehouse knows/);
  });
});
