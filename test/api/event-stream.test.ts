import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { api, startGateway, type TestGateway } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';

interface Client {
  ws: WebSocket;
  events: { id: number; kind: string; taskId: string | null }[];
  closed: Promise<number>;
}

function connect(gw: TestGateway, query: string): Promise<Client> {
  const ws = new WebSocket(`${gw.url.replace('http', 'ws')}/events/stream${query}`);
  const events: Client['events'] = [];
  ws.on('message', (data: Buffer) => events.push(JSON.parse(data.toString('utf8'))));
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, events, closed }));
    ws.once('unexpected-response', (req, res) => {
      req.destroy();
      reject(new Error(`HTTP ${res.statusCode}`));
    });
    ws.once('error', reject);
  });
}

describe('GET /events/stream', () => {
  it('resumes after an id while events are written, delivering each later id exactly once, in order', async () => {
    const gw = await startGateway({}, { stream: { pageSize: 25 } });
    const board = gw.kanban.board;
    const task = await board.create({ title: 'busy' }, { kind: 'api' });
    for (let i = 0; i < 600; i++) await board.comment(task.id, `before ${i}`, 'test');
    const after = 150;
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        await board.comment(task.id, `during ${i}`, 'test');
        await new Promise((r) => setImmediate(r));
      }
    })();
    const client = await connect(gw, `?after=${after}`);
    await waitFor('backlog and some live events', () => client.events.length > 1000);
    writing = false;
    await writer;
    const last = await board.events.lastId();
    await waitFor('every event up to the last written', () => client.events.at(-1)?.id === last);
    const ids = client.events.map((e) => e.id);
    expect(ids).toEqual(Array.from({ length: last - after }, (_, i) => after + 1 + i));
    client.ws.close();
  });

  it('serves 50 clients resuming at once in turns, each every event exactly once, in order', async () => {
    const gw = await startGateway({}, { stream: { pageSize: 50 } });
    const board = gw.kanban.board;
    const task = await board.create({ title: 'busy' }, { kind: 'api' });
    for (let i = 0; i < 1000; i++) await board.comment(task.id, `before ${i}`, 'test');
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        await board.comment(task.id, `during ${i}`, 'test');
        await new Promise((r) => setTimeout(r, 1));
      }
    })();
    const clients = await Promise.all(
      Array.from({ length: 50 }, (_, i) => connect(gw, `?after=${i * 10}`)),
    );
    // While the backlogs are being served, the API answers (the loop is shared, not taken).
    expect((await api(gw.url, 'GET', `/tasks/${task.id}`)).status).toBe(200);
    await waitFor('every backlog', () => clients.every((c) => c.events.length > 1000), 30_000);
    writing = false;
    await writer;
    const last = await board.events.lastId();
    await waitFor('every client at the last event', () =>
      clients.every((c) => c.events.at(-1)?.id === last),
    );
    for (const [i, client] of clients.entries()) {
      const after = i * 10;
      expect(client.events.map((e) => e.id)).toEqual(
        Array.from({ length: last - after }, (_, j) => after + 1 + j),
      );
      client.ws.close();
    }
  });

  it('filters by task and kinds', async () => {
    const gw = await startGateway();
    const a = await api(gw.url, 'POST', '/tasks', { title: 'a' });
    const b = await api(gw.url, 'POST', '/tasks', { title: 'b' });
    const client = await connect(gw, `?after=0&task=${a.body.id}&kinds=commented,archived`);
    await api(gw.url, 'POST', `/tasks/${b.body.id}/comments`, { text: 'not for us' });
    await api(gw.url, 'POST', `/tasks/${a.body.id}/comments`, { text: 'for us' });
    await api(gw.url, 'POST', `/tasks/${a.body.id}/archive`);
    await waitFor('two events', () => client.events.length === 2);
    expect(client.events.map((e) => [e.taskId, e.kind])).toEqual([
      [a.body.id, 'commented'],
      [a.body.id, 'archived'],
    ]);
    client.ws.close();
  });

  it('cuts off a client that never reads, keeping the send buffer bounded', async () => {
    const limit = 256 * 1024;
    const gw = await startGateway({}, { stream: { maxBufferedBytes: limit } });
    const board = gw.kanban.board;
    const task = await board.create({ title: 'noisy' }, { kind: 'api' });
    const client = await connect(gw, '');
    (client.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const text = 'x'.repeat(4000);
    for (let i = 0; i < 20_000 && gw.hub.size > 0; i++) {
      await board.comment(task.id, text, 'test');
      if (i % 100 === 0) await new Promise((r) => setTimeout(r, 1));
    }
    expect(gw.hub.size).toBe(0);
    // At most one message past the limit was ever queued for it: memory did not follow the writer.
    expect(gw.hub.maxBufferedSeen).toBeLessThanOrEqual(limit + 5000);
    client.ws.terminate();
  });

  it('closes clients with 1012 on shutdown', async () => {
    const gw = await startGateway();
    const client = await connect(gw, '');
    await gw.close();
    expect(await client.closed).toBe(1012);
  });

  it('needs the token when one is set, as a header or ?token=', async () => {
    const token = 'another-long-api-token';
    const gw = await startGateway({ api: { token } });
    await expect(connect(gw, '')).rejects.toThrow('HTTP 401');
    const client = await connect(gw, `?token=${token}`);
    await api(gw.url, 'POST', '/tasks', { title: 'seen' }, { authorization: `Bearer ${token}` });
    await waitFor('the created event', () => client.events.some((e) => e.kind === 'created'));
    client.ws.close();
  });

  it('rejects bad query parameters before upgrading', async () => {
    const gw = await startGateway();
    await expect(connect(gw, '?after=abc')).rejects.toThrow('HTTP 400');
    await expect(connect(gw, '?kinds=DROP%20TABLE')).rejects.toThrow('HTTP 400');
    for (const twice of ['?kinds=created&kinds=edited', '?task=a&task=b', '?after=1&after=2'])
      await expect(connect(gw, twice)).rejects.toThrow('HTTP 400');
  });

  it('refuses an after the board never reached, and streams live events after the newest', async () => {
    const gw = await startGateway();
    await api(gw.url, 'POST', '/tasks', { title: 'one' });
    const newest = await gw.kanban.board.events.lastId();
    for (const after of ['Infinity', '-Infinity', '1e400', String(newest + 1), '9007199254740993'])
      await expect(connect(gw, `?after=${after}`)).rejects.toThrow('HTTP 400');
    const client = await connect(gw, `?after=${newest}`);
    await api(gw.url, 'POST', '/tasks', { title: 'two' });
    await waitFor('the live event', () => client.events.some((e) => e.id === newest + 1));
    client.ws.close();
  });

  it('refuses an unknown kind or task in a filter instead of staying silent', async () => {
    const gw = await startGateway();
    await expect(connect(gw, '?kinds=completed,complted')).rejects.toThrow('HTTP 400');
    await expect(connect(gw, '?task=t_000000000000')).rejects.toThrow('HTTP 400');
    const task = await gw.kanban.board.create({ title: 'known' }, { kind: 'api' });
    const client = await connect(gw, `?kinds=completed,archived&task=${task.id}`);
    client.ws.close();
  });

  it('sends 1013 to a slow client that is still reading, once it has read what was queued', async () => {
    // The default limit (4 MiB): a slow reader takes seconds to get through it.
    const gw = await startGateway();
    const board = gw.kanban.board;
    const task = await board.create({ title: 'noisy' }, { kind: 'api' });
    const client = await connect(gw, '');
    const socket = (
      client.ws as unknown as {
        _socket: { pause(): void; resume(): void; once(e: 'data', f: () => void): void };
      }
    )._socket;
    socket.pause();
    const text = 'x'.repeat(4000);
    for (let i = 0; i < 20_000 && gw.hub.size > 0; i++) {
      await board.comment(task.id, text, 'test');
      if (i % 100 === 0) await new Promise((r) => setTimeout(r, 1));
    }
    expect(gw.hub.size).toBe(0);
    // It reads again, slowly (one chunk every 25 ms) but surely: the close frame behind the
    // data reaches it, however long the reading takes.
    const started = Date.now();
    const sip = setInterval(() => {
      socket.once('data', () => socket.pause());
      socket.resume();
    }, 25);
    const code = await client.closed;
    clearInterval(sip);
    expect(code).toBe(1013);
    console.log(`slow reader got 1013 after ${Date.now() - started} ms of sipping`);
  });
});
