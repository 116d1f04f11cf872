// Opening the board's schema on PostgreSQL: created and migrated under an advisory lock (hosts
// that start together migrate once), versions in schema_version, a newer one refused.
import type { ClientBase } from 'pg';
import { PG_MIGRATIONS } from './migrations.js';

/** A schema name: lower-case letters, digits and _, as the configuration allows. */
export function schemaIdent(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema))
    throw new Error(`schema "${schema}": lower-case letters, digits and _ only`);
  return `"${schema}"`;
}

/**
 * The notification channel of a schema's event log: every transaction that writes events
 * notifies it once (see events.ts). Longer names are cut: two boards that share a cut name only
 * wake each other for nothing.
 */
export function eventChannel(schema: string): string {
  return `gatehouse_${schema}`.slice(0, 63);
}

/** The schema holds a version this gatehouse does not know: it was upgraded by a newer one. */
export class SchemaTooNewError extends Error {
  constructor(
    readonly schema: string,
    readonly version: number,
  ) {
    super(
      `schema ${schema} is at version ${version}, newer than this gatehouse knows (${PG_MIGRATIONS.length})`,
    );
    this.name = 'SchemaTooNewError';
  }
}

async function currentVersion(client: ClientBase, ident: string): Promise<number> {
  const { rows } = await client.query<{ version: number }>(
    `SELECT version FROM ${ident}.schema_version`,
  );
  return rows[0]?.version ?? 0;
}

/**
 * Creates `schema` if needed and applies every migration above its version, all in one
 * transaction (an upgrade that fails leaves the schema as the version before had it, as on
 * SQLite). Returns the version it is at.
 */
export async function migratePostgres(
  client: ClientBase,
  schema: string,
  upTo = PG_MIGRATIONS.length,
): Promise<number> {
  const ident = schemaIdent(schema);
  await client.query('SELECT pg_advisory_lock(hashtext($1))', [`gatehouse.migrate.${schema}`]);
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${ident}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${ident}.schema_version (version integer NOT NULL)`,
    );
    await client.query(
      `INSERT INTO ${ident}.schema_version SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM ${ident}.schema_version)`,
    );
    const version = await currentVersion(client, ident);
    if (version > PG_MIGRATIONS.length) throw new SchemaTooNewError(schema, version);
    if (version >= upTo) return version;
    await client.query('BEGIN');
    try {
      await client.query(`SET LOCAL search_path TO ${ident}`);
      for (let next = version; next < upTo; next++) await client.query(PG_MIGRATIONS[next]!);
      await client.query(`UPDATE ${ident}.schema_version SET version = $1`, [upTo]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    }
    return upTo;
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [`gatehouse.migrate.${schema}`]);
  }
}
