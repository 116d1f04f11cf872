// A message a platform refuses for good never blocks the ones after it; texts are cut to the
// platform's limit; an answer of any size is read with bounded memory.
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { api, startGateway } from '../helpers/app.js';
import { telegramDouble, webhookReceiver } from '../helpers/doubles.js';
import { waitFor } from '../helpers/wait.js';

const quickBreaker = {
  timeoutMs: 2000,
  errorThresholdPercentage: 50,
  resetTimeoutMs: 300,
  volumeThreshold: 2,
};

async function notified(
  gw: Awaited<ReturnType<typeof startGateway>>,
  taskId: string,
  summary: string,
) {
  const { board } = gw.kanban;
  const { claim } = await import('../helpers/board.js');
  const run = await claim(board, gw.dataDir, taskId);
  await gw.kanban.worker.complete(taskId, run.token, { summary });
}

describe('refused notifications', () => {
  it('cuts a Telegram text to 4096 characters with a marker, and drops what a chat refuses without blocking the next', async () => {
    const tg = await telegramDouble();
    const gw = await startGateway(
      {
        platforms: [
          {
            name: 'tg',
            type: 'telegram',
            options: { token: tg.token, apiBase: tg.url, pollTimeoutSeconds: 1 },
            breaker: quickBreaker,
          },
        ],
      },
      { notifyRetryMs: 100 },
    );
    await waitFor('connected', () => gw.platforms.get('tg').view().state === 'connected');
    tg.say(42, '/task a long report');
    tg.say(43, '/task for a chat that blocked the bot');
    tg.say(42, '/task a short one');
    await waitFor('three tasks', async () => (await gw.kanban.board.counts()).ready === 3);
    const tasks = (await gw.kanban.board.list({ limit: 10 })).tasks;
    tg.refuseChats.add('43');
    await notified(gw, tasks[0]!.id, 'x'.repeat(5200));
    await notified(gw, tasks[1]!.id, 'never arrives');
    await notified(gw, tasks[2]!.id, 'short');
    const long = await waitFor('the long report', () =>
      tg.sent.find((m) => m.text.startsWith(`Task ${tasks[0]!.id}`)),
    );
    expect(long.text.length).toBeLessThanOrEqual(4096);
    expect(long.text).toMatch(/… \[\d+ more characters cut\]$/);
    await waitFor('the short one after it', () =>
      tg.sent.some((m) => m.text.startsWith(`Task ${tasks[2]!.id}`)),
    );
    const dropped = await waitFor('notification_dropped', async () =>
      (await gw.kanban.board.events.listForTask(tasks[1]!.id, 0, 100)).find(
        (e) => e.kind === 'notification_dropped',
      ),
    );
    expect(dropped.payload).toMatchObject({
      platform: 'tg',
      channel: '43',
      reason: expect.stringContaining('chat not found'),
    });
    await waitFor(
      'nothing left to send',
      async () => (await gw.platforms.notificationBacklog()) === 0,
    );
    expect(gw.platforms.get('tg').view().breaker.state).toBe('closed');
  });

  it('drops a home-channel message the webhook receiver refuses (400) and delivers the later ones', async () => {
    const receiver = await webhookReceiver();
    receiver.refuse = (m) => m.text.includes('poison');
    const gw = await startGateway(
      {
        platforms: [
          {
            name: 'ops',
            type: 'webhook',
            homeChannel: 'room',
            options: { url: receiver.url, secret: receiver.secret },
            breaker: quickBreaker,
          },
        ],
      },
      { notifyRetryMs: 100 },
    );
    const poison = await gw.kanban.board.create({ title: 'poison' }, { kind: 'api' });
    const fine = await gw.kanban.board.create({ title: 'fine' }, { kind: 'api' });
    await notified(gw, poison.id, 'bad');
    await notified(gw, fine.id, 'good');
    await waitFor(
      'the later message',
      () => receiver.received.some((m) => m.text.includes(fine.id)),
      15_000,
    );
    const dropped = (await gw.kanban.board.events.listForTask(poison.id, 0, 100)).find(
      (e) => e.kind === 'notification_dropped',
    );
    expect(dropped?.payload).toMatchObject({
      platform: 'ops',
      channel: 'room',
      reason: 'webhook answered HTTP 400',
    });
  });

  it('reads a platform answer of any size with bounded memory, and calls a platform that cannot be reached retrying', async () => {
    const endless = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const pump = () => {
        while (res.write(chunk));
      };
      res.on('drain', pump);
      pump();
    });
    await new Promise<void>((r) => endless.listen(0, '127.0.0.1', r));
    const port = (endless.address() as { port: number }).port;
    try {
      const gw = await startGateway({
        platforms: [
          {
            name: 'flood',
            type: 'webhook',
            options: {
              url: `http://127.0.0.1:${port}/`,
              secret: 'whsec_c3Nzc3Nzc3Nzc3Nzc3Nzc3Nzc3Nzc3Nz',
            },
            breaker: quickBreaker,
          },
          {
            name: 'nowhere',
            type: 'webhook',
            options: {
              url: 'http://nonexistent.invalid/hook',
              secret: 'whsec_c3Nzc3Nzc3Nzc3Nzc3Nzc3Nzc3Nzc3Nz',
            },
            breaker: quickBreaker,
          },
        ],
      });
      const before = process.memoryUsage().rss;
      const res = await api(gw.url, 'POST', '/platform/flood/send', {
        channel: 'c',
        text: 'hello',
      });
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.body.error.message).toMatch(/more than 4194304 bytes/);
      expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
      const lost = await api(gw.url, 'POST', '/platform/nowhere/send', {
        channel: 'c',
        text: 'hello',
      });
      expect(lost.status).toBe(503);
      expect(gw.platforms.get('nowhere').view().state).toBe('retrying');
    } finally {
      endless.closeAllConnections();
      await new Promise((r) => endless.close(r));
    }
  });
});
