// Local HTTP servers that play the remote services: a Telegram Bot API double and a webhook receiver.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterEach } from 'vitest';
import { randomUUID } from 'node:crypto';
import { secretKey, sign, verifySignature } from '../../src/platforms/webhook-signature.js';

/** A Standard Webhooks secret (whsec_ + base64 of the key) made from a readable seed. */
export function webhookSecret(seed: string): string {
  return `whsec_${Buffer.from(seed.padEnd(24, '.')).toString('base64')}`;
}

const servers: { server: Server; beforeClose: () => void }[] = [];

afterEach(async () => {
  for (const { server, beforeClose } of servers.splice(0)) {
    beforeClose();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

/**
 * Listens on a free loopback port, closed after the test; `beforeClose` ends what the server
 * does not track (upgraded websockets, timers).
 */
export async function listen(server: Server, beforeClose: () => void = () => {}): Promise<string> {
  servers.push({ server, beforeClose });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

export interface TelegramDouble {
  url: string;
  token: string;
  /** 'ok', 'down' (HTTP 500) or 'unauthorized' (401 on every call). */
  mode: 'ok' | 'down' | 'unauthorized';
  sent: { chat_id: string; text: string }[];
  calls: string[];
  /** Chats that sendMessage refuses with 400 "chat not found". */
  refuseChats: Set<string>;
  /** Queues a chat message as an update. */
  say(chat: number, text: string): void;
}

export async function telegramDouble(token = '123:test-token'): Promise<TelegramDouble> {
  const updates: { update_id: number; message: { text: string; chat: { id: number } } }[] = [];
  let nextId = 1;
  const waiting = new Set<() => void>();
  const double: TelegramDouble = {
    url: '',
    token,
    mode: 'ok',
    sent: [],
    calls: [],
    refuseChats: new Set(),
    say(chat, text) {
      updates.push({ update_id: nextId++, message: { text, chat: { id: chat } } });
      for (const wake of waiting) wake();
    },
  };
  const server = createServer((req, res) => {
    void (async () => {
      const body = JSON.parse((await readBody(req)).toString() || '{}') as Record<string, any>;
      const [, bot, method] = /^\/bot([^/]+)\/(\w+)$/.exec(req.url ?? '') ?? [];
      double.calls.push(method ?? '?');
      const reply = (status: number, payload: object) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
      if (bot !== token || double.mode === 'unauthorized')
        return reply(401, { ok: false, error_code: 401, description: 'Unauthorized' });
      if (double.mode === 'down')
        return reply(500, { ok: false, error_code: 500, description: 'Internal Server Error' });
      if (method === 'getMe')
        return reply(200, { ok: true, result: { id: 1, is_bot: true, username: 'gatehouse_bot' } });
      if (method === 'sendMessage') {
        // The real limits: at most 4096 characters, and only chats the bot can write to.
        if (String(body.text).length > 4096)
          return reply(400, {
            ok: false,
            error_code: 400,
            description: 'Bad Request: message is too long',
          });
        if (double.refuseChats.has(String(body.chat_id)))
          return reply(400, {
            ok: false,
            error_code: 400,
            description: 'Bad Request: chat not found',
          });
        double.sent.push({ chat_id: String(body.chat_id), text: String(body.text) });
        return reply(200, { ok: true, result: { message_id: double.sent.length } });
      }
      if (method === 'getUpdates') {
        const pending = () => updates.filter((u) => u.update_id >= Number(body.offset ?? 0));
        if (pending().length === 0) {
          await new Promise<void>((resolve) => {
            const wake = () => {
              waiting.delete(wake);
              resolve();
            };
            waiting.add(wake);
            setTimeout(wake, Math.min(Number(body.timeout ?? 0) * 1000, 300));
          });
        }
        return reply(200, { ok: true, result: pending() });
      }
      return reply(404, { ok: false, error_code: 404, description: 'Not Found' });
    })();
  });
  double.url = await listen(server);
  return double;
}

export interface WebhookReceiver {
  url: string;
  secret: string;
  /** HTTP status to answer with (200 while healthy). */
  status: number;
  /** Messages answered with 400 whatever `status` says. */
  refuse: (message: { channel: string; text: string }) => boolean;
  received: { channel: string; text: string; event?: string }[];
  /** Every correctly signed POST, whatever status it was answered with. */
  attempts: number;
  badSignatures: number;
  /** webhook-id of every correctly signed POST, in order. */
  deliveries: string[];
}

export async function webhookReceiver(
  secret = webhookSecret('a-shared-webhook-secret'),
): Promise<WebhookReceiver> {
  const key = secretKey(secret)!;
  const receiver: WebhookReceiver = {
    url: '',
    secret,
    status: 200,
    refuse: () => false,
    received: [],
    attempts: 0,
    badSignatures: 0,
    deliveries: [],
  };
  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const header = req.headers['webhook-signature'];
      const timestamp = String(req.headers['webhook-timestamp'] ?? '');
      const fresh = Math.abs(Date.now() / 1000 - Number(timestamp)) <= 300;
      const delivery = req.headers['webhook-id'];
      if (
        !fresh ||
        typeof delivery !== 'string' ||
        !verifySignature(
          key,
          delivery,
          timestamp,
          raw,
          typeof header === 'string' ? header : undefined,
        )
      ) {
        receiver.badSignatures++;
        return res.writeHead(401).end();
      }
      receiver.attempts++;
      receiver.deliveries.push(delivery);
      const message = JSON.parse(raw.toString()) as { channel: string; text: string };
      if (receiver.refuse(message)) return res.writeHead(400).end('{"error":"refused"}');
      if (receiver.status === 200) receiver.received.push(message);
      return res.writeHead(receiver.status).end();
    });
  });
  receiver.url = `${await listen(server)}/hook`;
  return receiver;
}

/** The headers of a signed inbound delivery (docs/platforms.md), as a sender following docs/platforms.md sends them. */
export function signedHeaders(
  secret: string,
  body: string,
  opts: { timestamp?: number; delivery?: string } = {},
): Record<string, string> {
  const timestamp = String(opts.timestamp ?? Math.floor(Date.now() / 1000));
  const id = opts.delivery ?? `msg_${randomUUID()}`;
  return {
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': sign(secretKey(secret)!, id, timestamp, body),
  };
}
