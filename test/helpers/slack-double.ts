// A Slack double: the Web API calls the adapter makes (auth.test, apps.connections.open,
// chat.postMessage) and Socket Mode's websocket, shaped as Slack documents them. An envelope
// that is not acknowledged is sent again, on the open connection and on every new one, until
// it is: as Slack retries.
import { createServer, type RequestListener, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { WebSocketServer, type WebSocket } from 'ws';
import { listen, readBody } from './doubles.js';
import { slackSign } from '../../src/platforms/slack-signature.js';

export interface SlackDouble {
  /** The Web API's base (the adapter's apiBase). */
  url: string;
  botToken: string;
  appToken: string;
  signingSecret: string;
  /** 'ok', 'down' (HTTP 503), 'unauthorized' (invalid_auth), 'limited' (429 on posts), 'hang'. */
  mode: 'ok' | 'down' | 'unauthorized' | 'limited' | 'hang';
  posted: { channel: string; text: string; at: number }[];
  /** When chat.postMessage last answered 429 (ms), or 0. */
  limitedAt: number;
  calls: string[];
  /** Channels chat.postMessage answers channel_not_found. */
  refuseChannels: Set<string>;
  /** Socket Mode connections opened so far. */
  connections: number;
  /** Event ids whose envelope was acknowledged. */
  acked: Set<string>;
  /** Every envelope is sent twice, under two envelope ids (Slack may repeat one). */
  repeatEach: boolean;
  /** Someone writes in a channel (from a bot, with `bot`): sent over Socket Mode; its event id. */
  say(channel: string, text: string, bot?: boolean): string;
  /** The Events API's POST body and signed headers for a message event. */
  signedEvent(
    channel: string,
    text: string,
    eventId: string,
    at?: number,
  ): { body: string; headers: Record<string, string> };
  /** Asks the open connection to go away (a refresh), as Slack does every few hours. */
  disconnect(): void;
  /** Drops every connection without a word (a network cut). */
  drop(): void;
}

/** `tls`: the Web API over HTTPS and Socket Mode over wss, with this key and certificate. */
export async function slackDouble(tls?: { key: string; cert: string }): Promise<SlackDouble> {
  const pending = new Map<string, object>();
  let sockets: WebSocket[] = [];
  let envelopes = 0;
  let events = 0;
  const double: SlackDouble = {
    url: '',
    botToken: 'xoxb-test-bot-token',
    appToken: 'xapp-test-app-token',
    signingSecret: 'a-slack-signing-secret-of-the-test',
    mode: 'ok',
    posted: [],
    limitedAt: 0,
    calls: [],
    refuseChannels: new Set(),
    connections: 0,
    acked: new Set(),
    repeatEach: false,
    say(channel, text, bot = false) {
      const eventId = `Ev${String(events++).padStart(6, '0')}`;
      pending.set(eventId, {
        event_id: eventId,
        type: 'event_callback',
        event: {
          type: 'message',
          channel,
          text,
          ts: `${Date.now() / 1000}`,
          ...(bot ? { bot_id: 'B1', subtype: 'bot_message' } : { user: 'U1' }),
        },
      });
      for (const ws of sockets) send(ws, eventId);
      return eventId;
    },
    signedEvent(channel, text, eventId, at = Math.floor(Date.now() / 1000)) {
      const body = JSON.stringify({
        type: 'event_callback',
        event_id: eventId,
        event: { type: 'message', channel, text, user: 'U1', ts: `${at}.000100` },
      });
      const timestamp = String(at);
      return {
        body,
        headers: {
          'content-type': 'application/json',
          'x-slack-request-timestamp': timestamp,
          'x-slack-signature': slackSign(double.signingSecret, timestamp, body),
        },
      };
    },
    drop() {
      for (const ws of sockets) ws.terminate();
    },
    disconnect() {
      for (const ws of sockets)
        ws.send(JSON.stringify({ type: 'disconnect', reason: 'refresh_requested' }));
    },
  };
  const send = (ws: WebSocket, eventId: string) => {
    const payload = pending.get(eventId);
    if (!payload) return;
    for (let i = 0; i < (double.repeatEach ? 2 : 1); i++)
      ws.send(
        JSON.stringify({
          envelope_id: `env-${envelopes++}-${eventId}`,
          type: 'events_api',
          accepts_response_payload: false,
          payload,
        }),
      );
  };
  const handle: RequestListener = (req, res) => {
    void (async () => {
      const method = (req.url ?? '').replace(/^\/api\//, '');
      const body = JSON.parse((await readBody(req)).toString() || '{}') as Record<string, unknown>;
      double.calls.push(method);
      const reply = (status: number, payload: object, headers: Record<string, string> = {}) =>
        res
          .writeHead(status, { 'content-type': 'application/json', ...headers })
          .end(JSON.stringify(payload));
      if (double.mode === 'hang') return;
      if (double.mode === 'down') return reply(503, { ok: false, error: 'service_unavailable' });
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      const wanted = method === 'apps.connections.open' ? double.appToken : double.botToken;
      if (token !== wanted || double.mode === 'unauthorized')
        return reply(200, { ok: false, error: 'invalid_auth' });
      if (method === 'auth.test')
        return reply(200, { ok: true, user_id: 'UBOT', team: 'gatehouse', bot_id: 'B0' });
      if (method === 'apps.connections.open') {
        const address = server.address();
        const port = typeof address === 'object' && address ? address.port : 0;
        const scheme = tls ? 'wss' : 'ws';
        return reply(200, {
          ok: true,
          url: `${scheme}://127.0.0.1:${port}/link?ticket=${envelopes}`,
        });
      }
      if (method === 'chat.postMessage') {
        if (double.mode === 'limited') {
          double.limitedAt = Date.now();
          return reply(429, { ok: false, error: 'ratelimited' }, { 'retry-after': '1' });
        }
        if (double.refuseChannels.has(String(body.channel)))
          return reply(200, { ok: false, error: 'channel_not_found' });
        double.posted.push({
          channel: String(body.channel),
          text: String(body.text),
          at: Date.now(),
        });
        return reply(200, { ok: true, channel: body.channel, ts: `${Date.now() / 1000}` });
      }
      return reply(200, { ok: false, error: 'unknown_method' });
    })();
  };
  // An HTTPS server is an HTTP server to everything here but its sockets.
  const server = tls ? (createTlsServer(tls, handle) as unknown as Server) : createServer(handle);
  const wss = new WebSocketServer({ server, path: '/link' });
  wss.on('connection', (ws) => {
    double.connections++;
    sockets.push(ws);
    ws.on('close', () => (sockets = sockets.filter((s) => s !== ws)));
    ws.on('message', (data: Buffer) => {
      const { envelope_id: id } = JSON.parse(data.toString('utf8')) as { envelope_id?: string };
      const eventId = id?.split('-').slice(2).join('-');
      if (eventId && pending.delete(eventId)) double.acked.add(eventId);
    });
    ws.send(JSON.stringify({ type: 'hello', num_connections: sockets.length }));
    for (const eventId of pending.keys()) send(ws, eventId);
  });
  // Not acknowledged within a second: sent again (Slack waits longer, with backoff).
  const retry = setInterval(() => {
    for (const ws of sockets) for (const eventId of pending.keys()) send(ws, eventId);
  }, 1000);
  retry.unref();
  const base = await listen(server, () => {
    clearInterval(retry);
    for (const ws of sockets) ws.terminate();
    wss.close();
  });
  double.url = `${tls ? base.replace(/^http:/, 'https:') : base}/api`;
  return double;
}
