// One way to run a statement on PostgreSQL, on the pool (reads) or a transaction's client: each
// statement is prepared once per connection, under a name made from its text.
import { createHash } from 'node:crypto';
import type pg from 'pg';

export type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

const names = new Map<string, string>();

const withoutNul = (text: string) => (text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text);

/**
 * PostgreSQL's text cannot hold U+0000, which SQLite stores (a worker's log tail may have one):
 * it is written as U+FFFD, and a lookup by a key holding one finds nothing, as on SQLite.
 */
function storable(value: unknown): unknown {
  if (typeof value === 'string') return withoutNul(value);
  if (Array.isArray(value)) return value.map(storable);
  return value;
}

/**
 * A text as PostgreSQL gives it back: U+0000 as U+FFFD (see storable), and a lone surrogate
 * (a string JSON can carry and UTF-8 cannot) as U+FFFD, as the driver encodes it.
 */
export function stored(text: string): string {
  const kept = withoutNul(text);
  return /[\uD800-\uDFFF]/.test(kept) ? Buffer.from(kept, 'utf8').toString('utf8') : kept;
}

/** A statement's name (PostgreSQL keeps 63 bytes of one: a digest of the text, not the text). */
export function statementName(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `gh_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

/** Runs `text` with `values`; its rows as objects. */
export async function rows<R extends pg.QueryResultRow>(
  db: Queryable,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  return (await db.query<R>({ name: statementName(text), text, values: values.map(storable) }))
    .rows;
}

/** Runs `text` with `values`; its rows as arrays of column values, in the statement's order. */
export async function arrays<R extends unknown[]>(
  db: Queryable,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  return (
    await db.query<R>({
      name: statementName(text),
      text,
      values: values.map(storable),
      rowMode: 'array',
    })
  ).rows;
}

/** Runs a write; how many rows it changed. */
export async function run(db: Queryable, text: string, values: unknown[] = []): Promise<number> {
  return (
    (await db.query({ name: statementName(text), text, values: values.map(storable) })).rowCount ??
    0
  );
}
