// The baseline on PostgreSQL: bare Fastify + a pg pool doing one insert or one select by key per
// request (the pool as large as the daemon's).
import Fastify from 'fastify';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const [url, schema, poolSize = '10'] = process.argv.slice(2);
const pool = new pg.Pool({
  connectionString: url,
  max: Number(poolSize),
  options: `-c search_path=${schema}`,
});
await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
await pool.query(
  'CREATE TABLE IF NOT EXISTS t (id text PRIMARY KEY, title text, created_at bigint)',
);
const app = Fastify();
app.post('/tasks', async (req, reply) => {
  const id = `t_${randomBytes(6).toString('hex')}`;
  const { rows } = await pool.query({
    name: 'insert',
    text: 'INSERT INTO t VALUES ($1, $2, $3) RETURNING *',
    values: [id, req.body.title, Date.now()],
  });
  return reply.code(201).send(rows[0]);
});
app.get('/tasks/:id', async (req, reply) => {
  const { rows } = await pool.query({
    name: 'select',
    text: 'SELECT * FROM t WHERE id = $1',
    values: [req.params.id],
  });
  return rows[0] ?? reply.code(404).send({ error: 'not found' });
});
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${app.server.address().port}\n`);
