// Inbound messages are handled exactly once (docs/platforms.md): a signed webhook delivery cannot be
// replayed, a paused or disabled platform takes nothing in, and SIGKILLs of the daemon while
// chat messages arrive neither lose nor double a /task.
import { wallClock } from '../../src/clock.js';
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { matrixOptions } from '../helpers/chat-platforms.js';
import { api, startGateway } from '../helpers/app.js';
import { freePort, startDaemon, tempDir, waitServing, writeConfig } from '../helpers/daemon.js';
import {
  signedHeaders,
  telegramDouble,
  webhookReceiver,
  webhookSecret,
} from '../helpers/doubles.js';
import { matrixDouble } from '../helpers/matrix-double.js';
import { slackDouble } from '../helpers/slack-double.js';
import { discordDouble } from '../helpers/discord-double.js';
import type { Spawned } from '../helpers/procs.js';
import { waitFor } from '../helpers/wait.js';
import { prng } from '../chaos/interleave.js';

const SECRET = webhookSecret('an-inbound-webhook-secret');

function webhookPlatform(url: string, extra: object = {}) {
  return { name: 'ops', type: 'webhook', options: { url, secret: SECRET }, ...extra };
}

describe('signed webhook deliveries', () => {
  it('create one task however often the same delivery is repeated, answering with what it created', async () => {
    const receiver = await webhookReceiver(SECRET);
    const gw = await startGateway({ platforms: [webhookPlatform(receiver.url)] });
    const body = JSON.stringify({ channel: 'c', text: '/task only once' });
    const headers = signedHeaders(SECRET, body, { delivery: 'delivery-1' });
    const first = await api(gw.url, 'POST', '/platform/ops/inbound', body, headers);
    expect(first.status).toBe(202);
    for (let i = 0; i < 2; i++) {
      const again = await api(gw.url, 'POST', '/platform/ops/inbound', body, headers);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ accepted: true, duplicate: true, taskId: first.body.taskId });
    }
    // The signature covers the id: a captured request resent under a new id is refused.
    const renamed = { ...headers, 'webhook-id': 'delivery-2' };
    const replayed = await api(gw.url, 'POST', '/platform/ops/inbound', body, renamed);
    expect(replayed.status).toBe(401);
    expect((await gw.kanban.board.counts()).ready).toBe(1);
    // One message received, however often it was delivered.
    const metrics = await fetch(`${gw.url}/metrics`).then((r) => r.text());
    expect(metrics).toContain('gatehouse_platform_messages_received_total{platform="ops"} 1\n');
  });

  it('takes two deliveries with the same channel and text in the same second for two', async () => {
    const receiver = await webhookReceiver(SECRET);
    const gw = await startGateway({ platforms: [webhookPlatform(receiver.url)] });
    const body = JSON.stringify({ channel: 'c', text: '/task deploy' });
    const timestamp = Math.floor(Date.now() / 1000);
    const ids: string[] = [];
    for (const delivery of ['delivery-a', 'delivery-b']) {
      const res = await api(
        gw.url,
        'POST',
        '/platform/ops/inbound',
        body,
        signedHeaders(SECRET, body, { delivery, timestamp }),
      );
      expect(res.status).toBe(202);
      ids.push(res.body.taskId);
    }
    expect(new Set(ids).size).toBe(2);
    expect((await gw.kanban.board.counts()).ready).toBe(2);
  });

  it('interoperates with the standardwebhooks library, signing and verifying both ways', async () => {
    const library = new Webhook(SECRET);
    // Outbound: what gatehouse sends is accepted by the library's verifier.
    const verified: unknown[] = [];
    const rejected: string[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const headers = Object.fromEntries(
          Object.entries(req.headers).map(([k, v]) => [k, String(v)]),
        );
        try {
          verified.push(library.verify(Buffer.concat(chunks).toString(), headers));
        } catch (err) {
          rejected.push((err as Error).message);
        }
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const gw = await startGateway({ platforms: [webhookPlatform(`http://127.0.0.1:${port}/`)] });
      const sent = await api(gw.url, 'POST', '/platform/ops/send', { channel: 'c', text: 'hi' });
      expect(sent.status).toBe(200);
      await waitFor('the library to verify a send', () => verified.length > 0);
      expect(rejected).toEqual([]);
      expect(verified[0]).toMatchObject({ channel: 'c', text: 'hi' });

      // Inbound: what the library signs is accepted by gatehouse, with a rotated-out key beside it.
      const body = JSON.stringify({ channel: 'c', text: '/task signed by the library' });
      const id = 'msg_library_1';
      const now = new Date();
      const old = new Webhook(webhookSecret('an-old-rotated-secret')).sign(id, now, body);
      const res = await api(gw.url, 'POST', '/platform/ops/inbound', body, {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': `${old} ${library.sign(id, now, body)}`,
      });
      expect(res.status).toBe(202);
      expect((await gw.kanban.board.get(res.body.taskId)).title).toBe('signed by the library');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses a stale timestamp, a signature over another timestamp, and a missing delivery id', async () => {
    const receiver = await webhookReceiver(SECRET);
    const gw = await startGateway({ platforms: [webhookPlatform(receiver.url)] });
    const body = JSON.stringify({ channel: 'c', text: '/task nope' });
    const now = Math.floor(Date.now() / 1000);
    const stale = signedHeaders(SECRET, body, { timestamp: now - 301 });
    const moved = {
      ...signedHeaders(SECRET, body, { timestamp: now - 10 }),
      'webhook-timestamp': String(now),
    };
    const { 'webhook-id': _d, ...anonymous } = signedHeaders(SECRET, body);
    for (const [what, headers] of [
      ['stale', stale],
      ['moved', moved],
      ['anonymous', anonymous],
    ] as const) {
      const res = await api(gw.url, 'POST', '/platform/ops/inbound', body, headers);
      expect(res.status, what).toBe(401);
    }
    expect((await gw.kanban.board.counts()).ready).toBe(0);
  });

  it("judges a delivery's timestamp by the daemon's clock, not the sender's", async () => {
    const receiver = await webhookReceiver(SECRET);
    // The daemon's clock ten minutes ahead of the sender's (moved, not faked).
    const ahead = 600;
    const gw = await startGateway(
      { platforms: [webhookPlatform(receiver.url)] },
      { clock: wallClock(() => Date.now() + ahead * 1000) },
    );
    const body = JSON.stringify({ channel: 'c', text: '/task by the daemon’s clock' });
    const sendersNow = Math.floor(Date.now() / 1000);
    const late = await api(
      gw.url,
      'POST',
      '/platform/ops/inbound',
      body,
      signedHeaders(SECRET, body, { timestamp: sendersNow }),
    );
    expect(late.status).toBe(401);
    expect(late.body.error.message).toMatch(/more than 300 s off/);
    expect((await gw.kanban.board.counts()).ready).toBe(0);
    const onTime = await api(
      gw.url,
      'POST',
      '/platform/ops/inbound',
      body,
      signedHeaders(SECRET, body, { timestamp: sendersNow + ahead }),
    );
    expect(onTime.status).toBeLessThan(300);
    expect((await gw.kanban.board.counts()).ready).toBe(1);
  });

  it('are refused by a paused platform (503) and a disabled one (404), creating nothing', async () => {
    const receiver = await webhookReceiver(SECRET);
    const gw = await startGateway({
      platforms: [
        webhookPlatform(receiver.url),
        webhookPlatform(receiver.url, { name: 'off', enabled: false }),
      ],
    });
    const body = JSON.stringify({ channel: 'c', text: '/task nope' });
    expect((await api(gw.url, 'POST', '/platform/ops/pause')).status).toBe(200);
    const paused = await api(
      gw.url,
      'POST',
      '/platform/ops/inbound',
      body,
      signedHeaders(SECRET, body),
    );
    expect(paused.status).toBe(503);
    const disabled = await api(
      gw.url,
      'POST',
      '/platform/off/inbound',
      body,
      signedHeaders(SECRET, body),
    );
    expect(disabled.status).toBe(404);
    expect((await gw.kanban.board.counts()).ready).toBe(0);
  });

  it('outbound deliveries carry a timestamp, a delivery id and a signature over both', async () => {
    const receiver = await webhookReceiver(SECRET);
    const gw = await startGateway({ platforms: [webhookPlatform(receiver.url)] });
    expect(
      (await api(gw.url, 'POST', '/platform/ops/send', { channel: 'c', text: 'hello' })).status,
    ).toBe(200);
    expect(receiver.badSignatures).toBe(0);
    expect(receiver.deliveries).toHaveLength(1);
  });
});

// A short run here; GH_INBOUND_MINUTES=10 npm test -- inbound (or the soak) runs it longer.
const minutes = Number(process.env.GH_INBOUND_MINUTES ?? 0);

describe('chat messages while the daemon is SIGKILLed', () => {
  it(
    'are each turned into exactly one task, from Telegram, Matrix, Slack, Discord and webhook senders that retry',
    async () => {
      const seed = Number(process.env.GH_INBOUND_SEED ?? 1130);
      const random = prng(seed);
      const tg = await telegramDouble();
      const mx = await matrixDouble();
      const sl = await slackDouble();
      const dc = await discordDouble();
      const dataDir = tempDir();
      const port = await freePort();
      const config = writeConfig(tempDir(), {
        workers: { maxConcurrent: 0 },
        // Killing is the point here: the crash-loop guard's backoff would only slow it down.
        crashLoop: { maxStarts: 100_000 },
        platforms: [
          {
            name: 'tg',
            type: 'telegram',
            options: { token: tg.token, apiBase: tg.url, pollTimeoutSeconds: 1 },
          },
          {
            name: 'mx',
            type: 'matrix',
            options: matrixOptions(mx),
          },
          {
            name: 'sl',
            type: 'slack',
            options: { botToken: sl.botToken, appToken: sl.appToken, apiBase: sl.url },
          },
          { name: 'dc', type: 'discord', options: { botToken: dc.token, apiBase: dc.url } },
          webhookPlatform('http://127.0.0.1:9/unused'),
        ],
      });
      let daemon: Spawned = startDaemon({ dataDir, port, config });
      let url = await waitServing(dataDir, daemon.pid);
      // Matrix's first sync marks where the history ends, and Discord's first session where
      // its messages begin (the Gateway replays only what a session missed).
      await waitFor(
        'the first Matrix sync',
        () => mx.calls.filter((c) => c === 'GET /sync').length > 1,
      );
      await waitFor('the first Discord session', () => dc.identifies === 1);
      const total =
        minutes > 0 ? Number.MAX_SAFE_INTEGER : Number(process.env.GH_INBOUND_MESSAGES ?? 120);
      const killChance = Number(process.env.GH_INBOUND_KILL_PERCENT ?? 5) / 100;
      const until = Date.now() + minutes * 60_000;
      let sent = 0;
      let kills = 0;
      // Webhook senders retry until they get a 2xx, with the same delivery id each time.
      const deliver = async (i: number) => {
        const body = JSON.stringify({ channel: 'c', text: `/task wh-${i}` });
        const headers = signedHeaders(SECRET, body, { delivery: `wh-${i}` });
        for (;;) {
          try {
            const res = await api(url, 'POST', '/platform/ops/inbound', body, headers);
            if (res.status < 300) return;
          } catch {
            // the daemon is down: try again
          }
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      const senders: Promise<void>[] = [];
      while (sent < total && (minutes === 0 || Date.now() < until)) {
        tg.say(1, `/task tg-${sent}`);
        mx.say('!room:example.org', `/task mx-${sent}`);
        sl.say('C1', `/task sl-${sent}`);
        dc.say('C1', `/task dc-${sent}`);
        senders.push(deliver(sent));
        sent++;
        await new Promise((r) => setTimeout(r, Math.floor(random() * 60)));
        if (random() < killChance) {
          daemon.child.kill('SIGKILL');
          await daemon.exited;
          kills++;
          daemon = startDaemon({ dataDir, port, config });
          url = await waitServing(dataDir, daemon.pid);
        }
      }
      await Promise.all(senders);
      // On time out, what was handled by then is reported below (what was lost, what doubled).
      let seen: string[] = [];
      const titles = await waitFor(
        'every message handled',
        async () => {
          const res = await api(url, 'GET', '/tasks?limit=1000');
          const all: string[] = (seen = []);
          let body = res.body;
          all.push(...body.tasks.map((t: { title: string }) => t.title));
          while (body.nextCursor) {
            body = (await api(url, 'GET', `/tasks?limit=1000&cursor=${body.nextCursor}`)).body;
            all.push(...body.tasks.map((t: { title: string }) => t.title));
          }
          return all.length >= sent * 5 ? all : null;
        },
        60_000,
      ).catch(() => seen);
      const count = (title: string) => titles.filter((t) => t === title).length;
      const lost = [];
      const doubled = [];
      for (let i = 0; i < sent; i++) {
        for (const title of [`tg-${i}`, `mx-${i}`, `sl-${i}`, `dc-${i}`, `wh-${i}`]) {
          if (count(title) === 0) lost.push(title);
          if (count(title) > 1) doubled.push(title);
        }
      }
      console.log(
        `inbound: seed ${seed}, ${sent * 5} messages, ${kills} kills, ${titles.length} tasks, ${lost.length} lost, ${doubled.length} doubled`,
      );
      expect({ lost, doubled }).toEqual({ lost: [], doubled: [] });
      expect(titles).toHaveLength(sent * 5);
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    },
    Math.max(3, minutes + 3) * 60_000,
  );
});
