// The baseline: bare Fastify + better-sqlite3 doing one insert or one select per request.
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { randomBytes } from 'node:crypto';

const [path, seed = '0', synchronous = 'FULL'] = process.argv.slice(2);
const db = new Database(path);
db.pragma('journal_mode = WAL');
// FULL by default, as the board: an answered insert is on disk.
db.pragma(`synchronous = ${synchronous === 'NORMAL' ? 'NORMAL' : 'FULL'}`);
db.exec('CREATE TABLE IF NOT EXISTS t (id TEXT PRIMARY KEY, title TEXT, created_at INTEGER)');
const insert = db.prepare('INSERT INTO t VALUES (?, ?, ?)');
const select = db.prepare('SELECT * FROM t WHERE id = ?');
db.transaction(() => {
  for (let i = 0; i < Number(seed); i++)
    insert.run(`t_${randomBytes(6).toString('hex')}`, `task ${i}`, i);
})();
const app = Fastify();
app.post('/tasks', async (req, reply) => {
  const id = `t_${randomBytes(6).toString('hex')}`;
  insert.run(id, req.body.title, Date.now());
  return reply.code(201).send(select.get(id));
});
const page = db.prepare('SELECT * FROM t WHERE rowid > ? ORDER BY rowid LIMIT ?');
app.get('/tasks', async (req) => ({
  tasks: page.all(Number(req.query.after ?? 0), Number(req.query.limit ?? 100)),
}));
app.get('/tasks/:id', async (req, reply) => {
  const row = select.get(req.params.id);
  return row ? row : reply.code(404).send({ error: 'not found' });
});
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${app.server.address().port}\n`);
