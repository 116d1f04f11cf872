// A schedule's state as both engines store it (docs/schedules.md): shared by every host, so
// one firing is made once and a pause holds everywhere.

export interface ScheduleState {
  name: string;
  /** The fire time (epoch ms) of its last firing, made or skipped, or null: none yet. */
  lastFireAt: number | null;
  /** The task its last made firing created, or null. */
  lastTaskId: string | null;
  paused: boolean;
  /** When it last changed. */
  at: number;
}
