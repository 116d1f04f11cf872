// Schedules' state on SQLite (docs/schedules.md).
import type { ScheduleTable } from '../contract.js';
import type { ScheduleState } from '../records/schedule.js';
import type { Db } from './db.js';

interface Row {
  name: string;
  last_fire_at: number | null;
  last_task_id: string | null;
  paused: number;
  at: number;
}

export class ScheduleStore implements ScheduleTable {
  private readonly all;
  private readonly putFire;
  private readonly putTask;
  private readonly putPaused;

  constructor(db: Db) {
    this.all = db.prepare<[], Row>(
      'SELECT name, last_fire_at, last_task_id, paused, at FROM schedules ORDER BY name',
    );
    this.putFire = db.prepare(`INSERT INTO schedules (name, last_fire_at, at) VALUES (?, ?, ?)
      ON CONFLICT (name) DO UPDATE SET last_fire_at = excluded.last_fire_at, at = excluded.at
      WHERE schedules.last_fire_at IS NULL OR schedules.last_fire_at < excluded.last_fire_at`);
    this.putTask = db.prepare(`INSERT INTO schedules (name, last_task_id, at) VALUES (?, ?, ?)
      ON CONFLICT (name) DO UPDATE SET last_task_id = excluded.last_task_id, at = excluded.at`);
    this.putPaused = db.prepare(`INSERT INTO schedules (name, paused, at) VALUES (?, ?, ?)
      ON CONFLICT (name) DO UPDATE SET paused = excluded.paused, at = excluded.at`);
  }

  async states(): Promise<ScheduleState[]> {
    return this.all.all().map((r) => ({
      name: r.name,
      lastFireAt: r.last_fire_at,
      lastTaskId: r.last_task_id,
      paused: r.paused === 1,
      at: r.at,
    }));
  }

  async fire(name: string, fireTime: number, at: number): Promise<boolean> {
    return this.putFire.run(name, fireTime, at).changes === 1;
  }

  async madeTask(name: string, taskId: string, at: number): Promise<void> {
    this.putTask.run(name, taskId, at);
  }

  async setPaused(name: string, paused: boolean, at: number): Promise<void> {
    this.putPaused.run(name, paused ? 1 : 0, at);
  }
}
