import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DatabaseError, openDatabase } from '../../src/kanban/store/db.js';
import { MIGRATIONS } from '../../src/kanban/store/migrations.js';
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
