// The baseline for fan-out: a bare `ws` server that broadcasts each POSTed message to every client.
import { createServer } from 'node:http';
import { WebSocketServer } from 'ws';

let id = 0;
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    const event = JSON.stringify({
      id: ++id,
      taskId: null,
      runId: null,
      kind: 'created',
      payload: JSON.parse(body),
      at: Date.now(),
    });
    for (const client of wss.clients) client.send(event);
    res.writeHead(201, { 'content-type': 'application/json' }).end(event);
  });
});
const wss = new WebSocketServer({ server, path: '/events/stream' });
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
