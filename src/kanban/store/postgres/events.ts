// Appending events on PostgreSQL so that ids are strictly increasing in commit order. A
// sequence alone is not: a transaction that took id 7 can commit after one that took id 8, and
// a reader resuming after 8 would miss 7 for ever. Ids come from the one row of event_counter:
// the writing transaction holds its row lock until it commits or rolls back, so the next
// transaction that writes events waits for it and takes the ids after its ids. The same
// statement notifies the schema's channel (delivered at commit, once per transaction): the
// other hosts read the log past what they have (event-watch.ts).
import { statementName, type Queryable } from './query.js';
import { eventChannel, schemaIdent } from './schema.js';

export interface EventRow {
  taskId: string | null;
  runId: string | null;
  kind: string;
  payload: string;
  at: number;
}

/** Inserts `events` in the open transaction of `db`, in order, in one statement; their ids. */
export async function appendEvents(
  db: Queryable,
  schema: string,
  events: readonly EventRow[],
): Promise<number[]> {
  if (events.length === 0) return [];
  const ident = schemaIdent(schema);
  const text = `WITH counter AS (
        UPDATE ${ident}.event_counter SET last = last + $1 WHERE id = 1 RETURNING last),
      notified AS (SELECT pg_notify($7, last::text) IS NULL AS sent FROM counter)
      INSERT INTO ${ident}.events (id, task_id, run_id, kind, payload, at)
      SELECT counter.last - $1 + e.n, e.task_id, e.run_id, e.kind, e.payload, e.at
        FROM counter, notified, unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[])
          WITH ORDINALITY AS e (task_id, run_id, kind, payload, at, n)
      RETURNING id`;
  const { rows } = await db.query<{ id: number | string }>({
    name: statementName(text),
    text,
    values: [
      events.length,
      events.map((e) => e.taskId),
      events.map((e) => e.runId),
      events.map((e) => e.kind),
      events.map((e) => e.payload),
      events.map((e) => e.at),
      eventChannel(schema),
    ],
  });
  return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
}
