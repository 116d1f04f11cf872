// An event as both engines store it.
import type { BoardEvent, EventKind } from '../../model/events.js';

export interface EventRow {
  id: number;
  task_id: string | null;
  run_id: string | null;
  kind: EventKind;
  payload: string;
  at: number;
}

/** An event from its row, on either engine. */
export function toEvent(row: EventRow): BoardEvent {
  return {
    id: row.id,
    taskId: row.task_id,
    runId: row.run_id,
    kind: row.kind,
    payload: JSON.parse(row.payload) as BoardEvent['payload'],
    at: row.at,
  } as BoardEvent;
}
