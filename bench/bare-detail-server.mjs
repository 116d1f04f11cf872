// The floor under GET /tasks/:id: bare Fastify answering with the same task detail, read by the
// board's own store (dist/: one statement on a read-only connection to the daemon's board file,
// or on a pool of 10 to its PostgreSQL schema), with none of the daemon's hooks (host check,
// auth, metrics, request logger) or answer shaping.
// Usage: bare-detail-server.mjs BOARD_FILE | bare-detail-server.mjs POSTGRES_URL SCHEMA
import Fastify from 'fastify';

const [where, schema] = process.argv.slice(2);

async function openTasks() {
  if (!/^postgres(ql)?:/.test(where)) {
    const { openReader } = await import('../dist/kanban/store/sqlite/db.js');
    const { TaskStore } = await import('../dist/kanban/store/records/task.js');
    return new TaskStore(openReader(where));
  }
  const { default: pg } = await import('pg');
  const { pgTypes } = await import('../dist/kanban/store/postgres/open.js');
  const { PgTaskStore } = await import('../dist/kanban/store/postgres/task-store.js');
  const pool = new pg.Pool({
    connectionString: where,
    max: 10,
    options: `-c search_path=${schema}`,
    types: pgTypes,
  });
  return new PgTaskStore(pool);
}

const tasks = await openTasks();
const app = Fastify();
app.get('/tasks/:id', async (req, reply) => {
  const found = await tasks.detail(req.params.id);
  if (!found) return reply.code(404).send({ error: 'not found' });
  return { ...found.task, runs: found.runs, children: found.children };
});
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${app.server.address().port}\n`);
