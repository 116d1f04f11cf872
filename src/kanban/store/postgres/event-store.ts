// The event log on PostgreSQL: the contract's reads; appended with ids in commit order (events.ts).
import type { BoardEvent, EventKind, NewEvent } from '../../model/events.js';
import type { EventTable } from '../contract.js';
import { toEvent, type EventRow } from '../records/event.js';
import { appendEvents } from './events.js';
import { rows, run, type Queryable } from './query.js';

export class PgEventStore implements EventTable {
  constructor(
    private readonly db: Queryable,
    private readonly schema: string,
  ) {}

  async lastAt(taskId: string, runId: string, kind: EventKind): Promise<number | null> {
    const [row] = await rows<{ at: number | null }>(
      this.db,
      'SELECT max(at) AS at FROM events WHERE task_id = $1 AND run_id = $2 AND kind = $3',
      [taskId, runId, kind],
    );
    return row?.at ?? null;
  }

  async pruneBefore(before: number, limit: number): Promise<number> {
    return run(
      this.db,
      'DELETE FROM events WHERE id IN (SELECT id FROM events WHERE at < $1 ORDER BY id LIMIT $2)',
      [before, limit],
    );
  }

  async append(events: readonly NewEvent[], at: number): Promise<number[]> {
    return appendEvents(
      this.db,
      this.schema,
      events.map((event) => ({
        taskId: event.taskId,
        runId: event.runId,
        kind: event.kind,
        payload: JSON.stringify(event.payload),
        at,
      })),
    );
  }

  async list(afterId: number, limit: number): Promise<BoardEvent[]> {
    const found = await rows<EventRow>(
      this.db,
      'SELECT * FROM events WHERE id > $1 ORDER BY id LIMIT $2',
      [afterId, limit],
    );
    return found.map(toEvent);
  }

  async listForTask(taskId: string, afterId: number, limit: number): Promise<BoardEvent[]> {
    const found = await rows<EventRow>(
      this.db,
      'SELECT * FROM events WHERE task_id = $1 AND id > $2 ORDER BY id LIMIT $3',
      [taskId, afterId, limit],
    );
    return found.map(toEvent);
  }

  async listKinds(
    afterId: number,
    kinds: readonly EventKind[],
    limit: number,
  ): Promise<BoardEvent[]> {
    const found = await rows<EventRow>(
      this.db,
      'SELECT * FROM events WHERE id > $1 AND kind = ANY($2::text[]) ORDER BY id LIMIT $3',
      [afterId, kinds, limit],
    );
    return found.map(toEvent);
  }

  async lastId(): Promise<number> {
    const [row] = await rows<{ id: number | null }>(this.db, 'SELECT max(id) AS id FROM events');
    return row?.id ?? 0;
  }

  async highWater(): Promise<number> {
    const [row] = await rows<{ last: number }>(
      this.db,
      'SELECT last FROM event_counter WHERE id = 1',
    );
    return row?.last ?? 0;
  }
}
