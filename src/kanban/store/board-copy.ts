// `gatehouse board copy`: a SQLite board moved into a PostgreSQL schema with nothing lost: every
// table, with its ids (tasks' and runs' order, event and comment ids), in one PostgreSQL
// transaction read from one SQLite snapshot. A target that already holds any task, run or
// event is refused with nothing written; a copy that dies half-way has written nothing, so it
// is simply run again.
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import pg, { type ClientBase } from 'pg';
import { MIGRATIONS } from './sqlite/migrations.js';
import { migratePostgres, schemaIdent } from './postgres/schema.js';
import { redactUrl } from './url.js';

/** Why a copy was refused or failed, said to the operator; nothing was written. */
export class CopyError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CopyError';
  }
}

/** The tables in the order their references allow, each with its columns. */
const TABLES: readonly { name: string; columns: readonly string[]; order: string }[] = [
  {
    name: 'tasks',
    order: 'seq',
    columns: [
      'seq',
      'id',
      'title',
      'body',
      'assignee',
      'status',
      'priority',
      'created_at',
      'updated_at',
      'started_at',
      'completed_at',
      'max_runtime_seconds',
      'max_retries',
      'consecutive_failures',
      'last_failure_error',
      'result',
      'summary',
      'current_run_id',
      'block_reason',
      'not_before',
      'origin',
      'lease_expires_at',
      'last_heartbeat_at',
      'terminating',
      'workspace',
      'repo',
      'instructions',
      'model',
      'review',
      'pr',
      'pr_sync',
      'block_kind',
      'question',
      'progress',
      'approval',
      'budget',
    ],
  },
  // Link order is the order of insertion (rowid here, ord there).
  { name: 'task_parents', order: 'rowid', columns: ['task_id', 'parent_id'] },
  {
    name: 'hosts',
    order: 'id',
    columns: [
      'id',
      'name',
      'started_at',
      'renewed_at',
      'lease_expires_at',
      'state',
      'running',
      'capacity',
      'profiles',
      'version',
    ],
  },
  {
    name: 'runs',
    order: 'seq',
    columns: [
      'seq',
      'id',
      'task_id',
      'profile',
      'token_hash',
      'pid',
      'pgid',
      'start_time',
      'boot_id',
      'started_at',
      'ended_at',
      'outcome',
      'exit_code',
      'signal',
      'error',
      'summary',
      'cpu_percent_max',
      'rss_bytes_max',
      'log_path',
      'keep_descendants',
      'proc_gone_at',
      'files_pruned_at',
      'group_held_until',
      'host',
      'host_id',
      'workspace',
      'agent',
    ],
  },
  { name: 'events', order: 'id', columns: ['id', 'task_id', 'run_id', 'kind', 'payload', 'at'] },
  { name: 'comments', order: 'id', columns: ['id', 'task_id', 'author', 'text', 'at'] },
  {
    name: 'subscriptions',
    order: 'platform, channel, task_id',
    columns: ['platform', 'channel', 'task_id', 'cursor'],
  },
  { name: 'platform_state', order: 'name', columns: ['name', 'state', 'updated_at'] },
  { name: 'platform_holders', order: 'platform', columns: ['platform', 'host_id'] },
  { name: 'profile_holds', order: 'profile', columns: ['profile', 'until', 'reason', 'at'] },
  {
    name: 'schedules',
    order: 'name',
    columns: ['name', 'last_fire_at', 'last_task_id', 'paused', 'at'],
  },
  {
    name: 'inbound_deliveries',
    order: 'platform, delivery_id',
    columns: ['platform', 'delivery_id', 'signature', 'task_id', 'at'],
  },
  // A key a client may still retry with after the move must still make nothing.
  {
    name: 'idempotency_keys',
    order: 'key',
    columns: ['key', 'route', 'digest', 'status', 'answer', 'at'],
  },
];

/** Rows sent to PostgreSQL per statement. */
const BATCH = 1000;

export type CopyCounts = Record<string, number>;

/** Opens the source read-only and checks it is a board of this version. */
function openSource(path: string): Database.Database {
  if (!existsSync(path)) throw new CopyError(`--from ${path}: no such file`);
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
  } catch (err) {
    throw new CopyError(`--from ${path}: cannot open it (${(err as Error).message})`, {
      cause: err,
    });
  }
  let version: number;
  try {
    version = db.pragma('user_version', { simple: true }) as number;
  } catch (err) {
    db.close();
    throw new CopyError(`--from ${path}: not a SQLite database (${(err as Error).message})`);
  }
  if (version !== MIGRATIONS.length) {
    db.close();
    throw new CopyError(
      version < MIGRATIONS.length
        ? `--from ${path}: board version ${version}, this gatehouse writes ${MIGRATIONS.length}; start this gatehouse on it once (it upgrades the board), stop it, then copy`
        : `--from ${path}: board version ${version} is newer than this gatehouse knows (${MIGRATIONS.length})`,
    );
  }
  return db;
}

/** A SQLite value as PostgreSQL takes it (keep_descendants is a boolean there). */
function pgValue(column: string, value: unknown): unknown {
  // SQLite's 0 and 1 are PostgreSQL's booleans.
  if (column === 'keep_descendants' || column === 'paused' || column === 'review')
    return value === null ? null : value === 1;
  return value;
}

async function targetCounts(client: ClientBase, ident: string): Promise<CopyCounts> {
  const counts: CopyCounts = {};
  for (const { name } of TABLES) {
    const { rows } = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${ident}.${name}`,
    );
    counts[name] = Number(rows[0]!.n);
  }
  return counts;
}

/**
 * Copies the board at `from` into `schema` of the PostgreSQL database at `url`; returns the rows
 * copied per table, verified against the target before the commit.
 */
export async function copyBoard(from: string, url: string, schema: string): Promise<CopyCounts> {
  if (!/^postgres(ql)?:\/\//.test(url))
    throw new CopyError(`--to ${redactUrl(url)}: expected a postgres:// URL`);
  try {
    schemaIdent(schema);
  } catch (err) {
    throw new CopyError(`--schema ${(err as Error).message}`);
  }
  const source = openSource(from);
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
  } catch (err) {
    source.close();
    const code = (err as { code?: string }).code;
    throw new CopyError(
      `--to ${redactUrl(url)}: cannot connect (${code === '28P01' ? 'password authentication failed' : (err as Error).message})`,
      { cause: err },
    );
  }
  try {
    return await copyInto(source, client, schema);
  } finally {
    source.close();
    await client.end().catch(() => undefined);
  }
}

async function copyInto(
  source: Database.Database,
  client: ClientBase,
  schema: string,
): Promise<CopyCounts> {
  const ident = schemaIdent(schema);
  {
    await migratePostgres(client, schema);
    // One snapshot of the source, one transaction on the target.
    source.exec('BEGIN');
    await client.query('BEGIN');
    try {
      await client.query(
        `LOCK TABLE ${ident}.tasks, ${ident}.runs, ${ident}.events IN EXCLUSIVE MODE`,
      );
      const held = await targetCounts(client, ident);
      if (held.tasks! + held.runs! + held.events! > 0)
        throw new CopyError(
          `schema ${schema} already holds ${held.tasks} tasks, ${held.runs} runs and ${held.events} events; copy only into an empty board (nothing was written)`,
        );
      const copied: CopyCounts = {};
      for (const table of TABLES) {
        copied[table.name] = await copyTable(source, client, ident, table);
      }
      // Ids go on from where the source's went, including ids retention has removed since.
      const events = source
        .prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'")
        .get() as { seq: number } | undefined;
      await client.query(`UPDATE ${ident}.event_counter SET last = $1`, [events?.seq ?? 0]);
      for (const [table, column] of [
        ['tasks', 'seq'],
        ['runs', 'seq'],
        ['comments', 'id'],
        ['hosts', 'id'],
      ] as const) {
        await client.query(
          `SELECT setval(pg_get_serial_sequence('${schema}.${table}', '${column}'),
             coalesce((SELECT max(${column}) FROM ${ident}.${table}), 0) + 1, false)`,
        );
      }
      const verified = await targetCounts(client, ident);
      for (const { name } of TABLES) {
        if (verified[name] !== copied[name])
          throw new CopyError(
            `${name}: ${copied[name]} rows read but ${verified[name]} in the target; nothing was written`,
          );
      }
      await client.query('COMMIT');
      return copied;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      source.exec('COMMIT');
    }
  }
}

async function copyTable(
  source: Database.Database,
  client: ClientBase,
  ident: string,
  table: (typeof TABLES)[number],
): Promise<number> {
  const read = source.prepare(
    `SELECT ${table.columns.join(', ')} FROM ${table.name} ORDER BY ${table.order}`,
  );
  let batch: Record<string, unknown>[] = [];
  let count = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await client.query(
      `INSERT INTO ${ident}.${table.name} (${table.columns.join(', ')})
       SELECT ${table.columns.join(', ')} FROM jsonb_populate_recordset(NULL::${ident}.${table.name}, $1::jsonb)`,
      [JSON.stringify(batch)],
    );
    count += batch.length;
    batch = [];
  };
  for (const row of read.iterate() as Iterable<Record<string, unknown>>) {
    const out: Record<string, unknown> = {};
    for (const column of table.columns) out[column] = pgValue(column, row[column]);
    batch.push(out);
    if (batch.length === BATCH) await flush();
  }
  await flush();
  return count;
}
