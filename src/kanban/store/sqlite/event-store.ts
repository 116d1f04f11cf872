// The append-only event log: written inside the transaction of the change it records.
import type { Db } from './db.js';
import type { BoardEvent, EventKind, NewEvent } from '../../model/events.js';
import type { EventTable } from '../contract.js';
import { toEvent, type EventRow } from '../records/event.js';

export class EventStore implements EventTable {
  private readonly insert;
  private readonly after;
  private readonly forTask;
  private readonly last;
  private readonly sequence;
  private readonly lastOfKind;
  private readonly pruneOld;
  private readonly kindsAfter = new Map<string, ReturnType<Db['prepare']>>();
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
    this.insert = db.prepare<[string | null, string | null, string, string, number]>(
      'INSERT INTO events (task_id, run_id, kind, payload, at) VALUES (?, ?, ?, ?, ?)',
    );
    this.after = db.prepare<[number, number], EventRow>(
      'SELECT * FROM events WHERE id > ? ORDER BY id LIMIT ?',
    );
    this.forTask = db.prepare<[string, number, number], EventRow>(
      'SELECT * FROM events WHERE task_id = ? AND id > ? ORDER BY id LIMIT ?',
    );
    this.last = db.prepare<[], { id: number | null }>('SELECT max(id) AS id FROM events');
    this.sequence = db.prepare<[], { seq: number }>(
      "SELECT seq FROM sqlite_sequence WHERE name = 'events'",
    );
    this.pruneOld = db.prepare<[number, number]>(
      'DELETE FROM events WHERE id IN (SELECT id FROM events WHERE at < ? ORDER BY id LIMIT ?)',
    );
    this.lastOfKind = db.prepare<[string, string, string], { at: number | null }>(
      'SELECT max(at) AS at FROM events WHERE task_id = ? AND run_id = ? AND kind = ?',
    );
  }

  /** When the run last recorded an event of `kind`, or null. */
  async lastAt(taskId: string, runId: string, kind: EventKind): Promise<number | null> {
    return this.lastOfKind.get(taskId, runId, kind)?.at ?? null;
  }

  /** Deletes up to `limit` of the oldest events written before `before`; how many. */
  async pruneBefore(before: number, limit: number): Promise<number> {
    return this.pruneOld.run(before, limit).changes;
  }

  /** Writes a transaction's events, in order, at its commit; their ids. */
  async append(events: readonly NewEvent[], at: number): Promise<number[]> {
    return events.map((event) =>
      Number(
        this.insert.run(event.taskId, event.runId, event.kind, JSON.stringify(event.payload), at)
          .lastInsertRowid,
      ),
    );
  }

  async list(afterId: number, limit: number): Promise<BoardEvent[]> {
    return this.after.all(afterId, limit).map(toEvent);
  }

  async listForTask(taskId: string, afterId: number, limit: number): Promise<BoardEvent[]> {
    return this.forTask.all(taskId, afterId, limit).map(toEvent);
  }

  /** Events of the given kinds after `afterId`, oldest first. */
  async listKinds(
    afterId: number,
    kinds: readonly EventKind[],
    limit: number,
  ): Promise<BoardEvent[]> {
    const key = kinds.join(',');
    let stmt = this.kindsAfter.get(key);
    if (!stmt) {
      stmt = this.db.prepare(
        `SELECT * FROM events WHERE id > ? AND kind IN (${kinds.map(() => '?').join(', ')}) ORDER BY id LIMIT ?`,
      );
      this.kindsAfter.set(key, stmt);
    }
    return (stmt.all([afterId, ...kinds, limit]) as EventRow[]).map(toEvent);
  }

  async lastId(): Promise<number> {
    return this.last.get()?.id ?? 0;
  }

  /** The highest id ever given to an event, even one retention has removed since. */
  async highWater(): Promise<number> {
    return this.sequence.get()?.seq ?? 0;
  }
}
