// Platforms: time from a service's return to `connected`, the latency a closed breaker adds to a
// send against calling the adapter directly, and notification delay from task event to receipt.
import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../dist/config/load.js';
import { composeGateway } from '../dist/gateway/compose.js';
import { openStore } from '../dist/kanban/store/sqlite/store.js';
import { createWebhook } from '../dist/platforms/webhook.js';
import { claimForDemo, median, p99, printTable, removeDir, tempDir, waitFor } from './lib.mjs';

// A Standard Webhooks secret: whsec_ and the base64 of the key.
const SECRET = `whsec_${Buffer.from('bench-webhook-secret-key-bytes').toString('base64')}`;

/** A receiver that answers 200 (or `status`) and stamps each message's arrival. */
async function receiver() {
  const state = { status: 200, arrivals: [] };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (state.status === 200)
        state.arrivals.push({ at: Date.now(), body: JSON.parse(Buffer.concat(chunks).toString()) });
      res.writeHead(state.status).end();
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${server.address().port}/hook`;
  state.close = () =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(r);
    });
  return state;
}

/** A Telegram double whose getMe fails while `down`. */
async function telegram() {
  const state = { down: true };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const ok = !state.down;
      const method = req.url.split('/').pop();
      if (method === 'getUpdates' && ok)
        return setTimeout(() => res.writeHead(200).end('{"ok":true,"result":[]}'), 200);
      res
        .writeHead(ok ? 200 : 500)
        .end(ok ? '{"ok":true,"result":{}}' : '{"ok":false,"description":"down"}');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${server.address().port}`;
  state.close = () =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(r);
    });
  return state;
}

async function gateway(platforms, dataDir = tempDir()) {
  writeFileSync(
    join(dataDir, 'c.json'),
    JSON.stringify({ dataDir, workers: { maxConcurrent: 0 }, platforms }),
  );
  const config = loadConfig({ config: join(dataDir, 'c.json') }, process.env, dataDir);
  const gw = await composeGateway({
    config,
    store: openStore(join(dataDir, 'gatehouse.db')),
    logger: pino({ level: 'silent' }),
    requestStop: () => {},
    notifyRetryMs: 1000,
  });
  await gw.platforms.start();
  gw.close = async () => {
    for (const step of gw.closeSteps) await step.run();
    removeDir(dataDir);
  };
  return gw;
}

async function recovery(runs) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const tg = await telegram();
    const gw = await gateway([
      {
        name: 'tg',
        type: 'telegram',
        options: { token: '1:x', apiBase: tg.url, pollTimeoutSeconds: 1 },
        breaker: {
          resetTimeoutMs: 1000,
          volumeThreshold: 3,
          errorThresholdPercentage: 50,
          timeoutMs: 2000,
        },
      },
    ]);
    const sup = gw.platforms.get('tg');
    await waitFor(
      'retrying',
      () => sup.view().state === 'retrying' && sup.view().counters.connects === 0,
      10_000,
    );
    const t0 = Date.now();
    tg.down = false;
    await waitFor('connected', () => sup.view().state === 'connected', 30_000, 5);
    times.push(Date.now() - t0);
    await gw.close();
    await tg.close();
  }
  return times;
}

async function sendLatency(n) {
  const rx = await receiver();
  const direct = createWebhook({ url: rx.url, secret: SECRET }, {});
  const gw = await gateway([
    { name: 'ops', type: 'webhook', options: { url: rx.url, secret: SECRET } },
  ]);
  const sup = gw.platforms.get('ops');
  const timed = async (fn) => {
    const t0 = performance.now();
    await fn();
    return performance.now() - t0;
  };
  const viaBreaker = [];
  const bare = [];
  // Interleaved, so drift (JIT, GC, the other core) hits both alike; the first 50 pairs warm up.
  for (let i = 0; i < n + 50; i++) {
    const a = await timed(() => sup.send('c', 'hello'));
    const b = await timed(() => direct.send('c', 'hello', null, AbortSignal.timeout(5000)));
    if (i >= 50) {
      viaBreaker.push(a);
      bare.push(b);
    }
  }
  await gw.close();
  await rx.close();
  return { viaBreaker, bare };
}

async function notificationDelay(n) {
  const rx = await receiver();
  const gw = await gateway([
    { name: 'ops', type: 'webhook', homeChannel: 'room', options: { url: rx.url, secret: SECRET } },
  ]);
  const { board, worker } = gw.kanban;
  const delays = [];
  for (let i = 0; i < n; i++) {
    const task = await board.create({ title: `notify ${i}` }, { kind: 'api' });
    const claim = await claimForDemo(board, task.id, () => '/dev/null');
    await worker.complete(task.id, claim.token, { summary: 'ok' });
    const event = (await board.events.listForTask(task.id, 0, 100)).find(
      (e) => e.kind === 'completed',
    );
    const arrival = await waitFor(
      'receipt',
      () => rx.arrivals.find((a) => a.body.text.includes(task.id)),
      10_000,
      1,
    );
    delays.push(arrival.at - event.at);
  }
  await gw.close();
  await rx.close();
  return delays;
}

export async function run() {
  const back = await recovery(5);
  const send = await sendLatency(500);
  const notify = await notificationDelay(100);
  return printTable('Platforms', [
    {
      figure: `service back → connected, median (p99 ${p99(back).toFixed(0)} ms; retry backoff starts at 1 s)`,
      unit: 'ms',
      value: median(back),
    },
    {
      figure: `send through the closed breaker, median (p99 ${p99(send.viaBreaker).toFixed(2)} ms)`,
      unit: 'ms',
      value: median(send.viaBreaker),
      baselineName: `adapter called directly (p99 ${p99(send.bare).toFixed(2)} ms)`,
      baseline: median(send.bare),
    },
    {
      figure: `task event → receiver got the notification, median (p99 ${p99(notify).toFixed(0)} ms)`,
      unit: 'ms',
      value: median(notify),
    },
  ]);
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
