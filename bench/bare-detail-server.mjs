// The floor under GET /tasks/:id: bare Fastify answering with the same task detail, read by the
// board's own store (dist/, one statement on a read-only connection to the daemon's board file),
// with none of the daemon's hooks (host check, auth, metrics, request logger) or answer shaping.
import Fastify from 'fastify';
import { openReader } from '../dist/kanban/store/sqlite/db.js';
import { TaskStore } from '../dist/kanban/store/sqlite/task-store.js';

const [path] = process.argv.slice(2);
const tasks = new TaskStore(openReader(path));
const app = Fastify();
app.get('/tasks/:id', async (req, reply) => {
  const found = await tasks.detail(req.params.id);
  if (!found) return reply.code(404).send({ error: 'not found' });
  return { ...found.task, runs: found.runs, children: found.children };
});
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${app.server.address().port}\n`);
