// Schedules' state on PostgreSQL (docs/schedules.md). A firing's upsert locks the schedule's row:
// a second host firing the same time waits for the first to commit, then updates nothing.
import type { ScheduleTable } from '../contract.js';
import type { ScheduleState } from '../records/schedule.js';
import { rows, run, type Queryable } from './query.js';

interface Row {
  name: string;
  last_fire_at: string | null;
  last_task_id: string | null;
  paused: boolean;
  at: string;
}

export class PgScheduleStore implements ScheduleTable {
  constructor(private readonly db: Queryable) {}

  async states(): Promise<ScheduleState[]> {
    const found = await rows<Row>(
      this.db,
      'SELECT name, last_fire_at, last_task_id, paused, at FROM schedules ORDER BY name',
      [],
    );
    return found.map((r) => ({
      name: r.name,
      lastFireAt: r.last_fire_at === null ? null : Number(r.last_fire_at),
      lastTaskId: r.last_task_id,
      paused: r.paused,
      at: Number(r.at),
    }));
  }

  async fire(name: string, fireTime: number, at: number): Promise<boolean> {
    return (
      (await run(
        this.db,
        `INSERT INTO schedules (name, last_fire_at, at) VALUES ($1, $2, $3)
        ON CONFLICT (name) DO UPDATE SET last_fire_at = excluded.last_fire_at, at = excluded.at
        WHERE schedules.last_fire_at IS NULL OR schedules.last_fire_at < excluded.last_fire_at`,
        [name, fireTime, at],
      )) === 1
    );
  }

  async madeTask(name: string, taskId: string, at: number): Promise<void> {
    await run(
      this.db,
      `INSERT INTO schedules (name, last_task_id, at) VALUES ($1, $2, $3)
      ON CONFLICT (name) DO UPDATE SET last_task_id = excluded.last_task_id, at = excluded.at`,
      [name, taskId, at],
    );
  }

  async setPaused(name: string, paused: boolean, at: number): Promise<void> {
    await run(
      this.db,
      `INSERT INTO schedules (name, paused, at) VALUES ($1, $2, $3)
      ON CONFLICT (name) DO UPDATE SET paused = excluded.paused, at = excluded.at`,
      [name, paused, at],
    );
  }
}
