// Appending events on PostgreSQL so that ids are strictly increasing in commit order. A
// sequence alone is not: a transaction that took id 7 can commit after one that took id 8, and
// a reader resuming after 8 would miss 7 for ever. Ids come from the one row of event_counter:
// the writing transaction holds its row lock until it commits or rolls back, so the next
// transaction that writes events waits for it and takes the ids after its ids.
import type { ClientBase } from 'pg';
import { schemaIdent } from './schema.js';

export interface EventRow {
  taskId: string | null;
  runId: string | null;
  kind: string;
  payload: string;
  at: number;
}

/** Inserts `events` in the open transaction of `client`, in order; their ids. */
export async function appendEvents(
  client: ClientBase,
  schema: string,
  events: readonly EventRow[],
): Promise<number[]> {
  if (events.length === 0) return [];
  const ident = schemaIdent(schema);
  const { rows } = await client.query<{ last: string }>(
    `UPDATE ${ident}.event_counter SET last = last + $1 WHERE id = 1 RETURNING last`,
    [events.length],
  );
  const first = Number(rows[0]!.last) - events.length + 1;
  const ids = events.map((_, i) => first + i);
  await client.query(
    `INSERT INTO ${ident}.events (id, task_id, run_id, kind, payload, at)
     SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[])`,
    [
      ids,
      events.map((e) => e.taskId),
      events.map((e) => e.runId),
      events.map((e) => e.kind),
      events.map((e) => e.payload),
      events.map((e) => e.at),
    ],
  );
  return ids;
}
