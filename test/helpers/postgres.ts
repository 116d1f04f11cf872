// The PostgreSQL the suite started (test/postgres-setup.ts), or the one GATEHOUSE_TEST_DATABASE_URL
// names; each test gets a schema of its own, dropped after it.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterEach } from 'vitest';

const schemas: { pool: pg.Pool; schema: string }[] = [];

afterEach(async () => {
  for (const { pool, schema } of schemas.splice(0)) {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  }
});

/** The server's URL; throws (the test fails) when the suite could not start one. */
export function databaseUrl(): string {
  const url = process.env.GATEHOUSE_TEST_DATABASE_URL;
  if (!url)
    throw new Error(
      process.env.GH_TEST_POSTGRES_MISSING ??
        'no PostgreSQL for the tests (see test/postgres-setup.ts)',
    );
  return url;
}

/** A pool on the test server and a fresh schema name, both cleaned up after the test. */
export function testSchema(max = 4): { pool: pg.Pool; schema: string; url: string } {
  const url = databaseUrl();
  const pool = new pg.Pool({ connectionString: url, max });
  const schema = `t_${randomBytes(6).toString('hex')}`;
  schemas.push({ pool, schema });
  return { pool, schema, url };
}
