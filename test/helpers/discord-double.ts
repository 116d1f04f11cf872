// A Discord double: REST v10 (users/@me, gateway/bot, channel messages with rate-limit headers)
// and the Gateway websocket (hello, heartbeat acks, identify → READY, resume → the events after
// the given sequence then RESUMED, opcodes 7 and 9), shaped as Discord documents them.
import { createServer } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { listen, readBody } from './doubles.js';

export interface DiscordDouble {
  /** REST base (the adapter's apiBase). */
  url: string;
  gatewayUrl: string;
  token: string;
  /** 'ok', 'down' (HTTP 502), 'unauthorized' (401), 'limited' (429 on a post, then ok), 'hang'. */
  mode: 'ok' | 'down' | 'unauthorized' | 'limited' | 'hang';
  posted: { channel: string; content: string }[];
  posts: number;
  /** Channels a post answers 403 Missing Access. */
  refuseChannels: Set<string>;
  /** Gateway connections, identifies and resumes so far. */
  connections: number;
  identifies: number;
  resumes: number;
  /** When false, heartbeats go unacknowledged (a zombie connection). */
  ackHeartbeats: boolean;
  /** Someone writes in a channel (a bot, with `bot`). */
  say(channel: string, content: string, bot?: boolean): void;
  /** Opcode 7: Discord asks the client to reconnect and resume. */
  askReconnect(): void;
  /** Opcode 9: the session is invalid (resumable or not). */
  invalidate(resumable: boolean): void;
  /** Drops every connection without a word (a network cut). */
  drop(): void;
}

export async function discordDouble(token = 'discord-test-bot-token'): Promise<DiscordDouble> {
  /** The session's dispatches, by sequence number (1-based). */
  const log: { t: string; d: object }[] = [];
  let sockets: { ws: WebSocket; live: boolean }[] = [];
  let sessionId = 'session-0';
  let messageIds = 1000;
  const double: DiscordDouble = {
    url: '',
    gatewayUrl: '',
    token,
    mode: 'ok',
    posted: [],
    posts: 0,
    refuseChannels: new Set(),
    connections: 0,
    identifies: 0,
    resumes: 0,
    ackHeartbeats: true,
    say(channel, content, bot = false) {
      dispatch('MESSAGE_CREATE', {
        id: String(messageIds++),
        channel_id: channel,
        content,
        author: { id: bot ? 'B1' : 'U1', username: bot ? 'bot' : 'alice', bot },
      });
    },
    askReconnect() {
      for (const s of sockets) s.ws.send(JSON.stringify({ op: 7, d: null, s: null, t: null }));
    },
    drop() {
      for (const s of sockets) s.ws.terminate();
    },
    invalidate(resumable) {
      if (!resumable) sessionId = `session-${double.identifies + 1}`;
      for (const s of sockets) s.ws.send(JSON.stringify({ op: 9, d: resumable, s: null, t: null }));
    },
  };
  const dispatch = (t: string, d: object) => {
    log.push({ t, d });
    const s = log.length;
    for (const socket of sockets)
      if (socket.live) socket.ws.send(JSON.stringify({ op: 0, d, s, t }));
  };
  const server = createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? '').replace(/^\/api\/v10/, '');
      const body = JSON.parse((await readBody(req)).toString() || '{}') as Record<string, unknown>;
      const reply = (status: number, payload: object, headers: Record<string, string> = {}) =>
        res
          .writeHead(status, { 'content-type': 'application/json', ...headers })
          .end(JSON.stringify(payload));
      if (req.headers.authorization !== `Bot ${token}` || double.mode === 'unauthorized')
        return reply(401, { message: '401: Unauthorized', code: 0 });
      if (double.mode === 'hang') return;
      if (double.mode === 'down') return reply(502, { message: 'Bad Gateway', code: 0 });
      if (path === '/users/@me') return reply(200, { id: 'BOT', username: 'gatehouse', bot: true });
      if (path === '/gateway/bot') return reply(200, { url: double.gatewayUrl, shards: 1 });
      const post = /^\/channels\/([^/]+)\/messages$/.exec(path);
      if (req.method === 'POST' && post) {
        double.posts++;
        const channel = decodeURIComponent(post[1]!);
        if (double.mode === 'limited') {
          double.mode = 'ok';
          return reply(
            429,
            { message: 'You are being rate limited.', retry_after: 0.3, global: false },
            { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset-after': '0.3' },
          );
        }
        if (double.refuseChannels.has(channel))
          return reply(403, { message: 'Missing Access', code: 50001 });
        double.posted.push({ channel, content: String(body.content) });
        return reply(
          200,
          { id: String(messageIds++), channel_id: channel, content: body.content },
          {
            'x-ratelimit-limit': '5',
            'x-ratelimit-remaining': '4',
            'x-ratelimit-reset-after': '1',
          },
        );
      }
      return reply(404, { message: '404: Not Found', code: 0 });
    })();
  });
  const wss = new WebSocketServer({ server, path: '/gateway' });
  wss.on('connection', (ws) => {
    double.connections++;
    const socket = { ws, live: false };
    sockets.push(socket);
    ws.on('close', () => (sockets = sockets.filter((s) => s !== socket)));
    ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: 500 }, s: null, t: null }));
    ws.on('message', (data: Buffer) => {
      const msg = JSON.parse(data.toString('utf8')) as { op: number; d: any };
      if (msg.op === 1) {
        if (double.ackHeartbeats) ws.send(JSON.stringify({ op: 11, d: null, s: null, t: null }));
      } else if (msg.op === 2) {
        double.identifies++;
        if (msg.d?.token !== token) return ws.close(4004, 'Authentication failed');
        socket.live = true;
        const ready = {
          v: 10,
          session_id: sessionId,
          resume_gateway_url: double.gatewayUrl,
          user: { id: 'BOT', bot: true },
        };
        log.push({ t: 'READY', d: ready });
        ws.send(JSON.stringify({ op: 0, d: ready, s: log.length, t: 'READY' }));
      } else if (msg.op === 6) {
        double.resumes++;
        if (msg.d?.session_id !== sessionId)
          return ws.send(JSON.stringify({ op: 9, d: false, s: null, t: null }));
        // What the session missed, then RESUMED.
        for (let s = Number(msg.d.seq) + 1; s <= log.length; s++)
          ws.send(JSON.stringify({ op: 0, d: log[s - 1]!.d, s, t: log[s - 1]!.t }));
        socket.live = true;
        log.push({ t: 'RESUMED', d: {} });
        ws.send(JSON.stringify({ op: 0, d: {}, s: log.length, t: 'RESUMED' }));
      }
    });
  });
  const base = await listen(server, () => {
    for (const s of sockets) s.ws.terminate();
    wss.close();
  });
  double.url = `${base}/api/v10`;
  double.gatewayUrl = `${base.replace('http', 'ws')}/gateway`;
  return double;
}
