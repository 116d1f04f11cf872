// The Discord adapter: REST v10 (GET /users/@me on connect, GET /gateway/bot, POST
// /channels/{id}/messages within each route's rate-limit bucket) and the Gateway websocket
// (hello, heartbeats with jitter, identify or resume, reconnect on opcode 7, a fresh identify
// after an invalid session, and a connection whose heartbeat goes unacknowledged treated as
// dead). Inbound is exactly once: the session and the sequence number of each message are saved
// in the transaction of its task, so a daemon that crashed resumes the session from there and
// Discord replays what came after.
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { PlatformError, type AdapterFactory, type PlatformAdapter } from './adapter.js';
import { requestJson, type HttpResult } from './http-json.js';
import type { Static } from '../schema-types.js';
import type { discordOptions } from './discord-options.js';

const OP = {
  dispatch: 0,
  heartbeat: 1,
  identify: 2,
  resume: 6,
  reconnect: 7,
  invalidSession: 9,
  hello: 10,
  heartbeatAck: 11,
} as const;
/** GUILD_MESSAGES, DIRECT_MESSAGES and MESSAGE_CONTENT: messages and what they say. */
const INTENTS = (1 << 9) | (1 << 12) | (1 << 15);

/** The fields of the Gateway's payloads this adapter reads. */
interface GatewayData {
  heartbeat_interval?: number;
  session_id?: string;
  resume_gateway_url?: string;
  channel_id?: unknown;
  content?: unknown;
  author?: { bot?: boolean; id?: string };
}

/** Close codes after which trying again cannot help: the operator must act (4014: the Message
 * Content intent is not switched on for the bot). */
const FATAL_CLOSE: Record<number, string> = {
  4004: 'authentication failed (check the bot token)',
  4010: 'invalid shard',
  4011: 'sharding required',
  4012: 'invalid API version',
  4013: 'invalid intents',
  4014: 'disallowed intents (turn on the Message Content intent in the developer portal)',
};
/** Close codes after which the session cannot be resumed: the next connection identifies. */
const SESSION_GONE = new Set([4007, 4009]);

interface Session {
  sessionId: string;
  seq: number;
  resumeUrl: string;
}

/** Maps a REST answer to its body, or to a PlatformError of the right kind. */
function resultOf(what: string, res: HttpResult): Record<string, unknown> {
  if (res.status >= 200 && res.status < 300) return (res.body ?? {}) as Record<string, unknown>;
  const body = (res.body ?? {}) as { message?: unknown; retry_after?: unknown; global?: unknown };
  const message = `${what}: ${typeof body.message === 'string' ? body.message : `HTTP ${res.status}`}`;
  if (res.status === 401) throw new PlatformError(`${message} (check the bot token)`, 'permanent');
  if (res.status === 429) {
    const seconds = typeof body.retry_after === 'number' ? body.retry_after : 1;
    throw new PlatformError(
      `${message} (rate limited${body.global === true ? ', globally' : ''})`,
      'retryable',
      Math.ceil(seconds * 1000),
    );
  }
  if (res.status >= 400 && res.status < 500) throw new PlatformError(message, 'caller');
  throw new PlatformError(message, 'retryable');
}

function sessionOf(state: Record<string, unknown>): Session | null {
  const s = state.session as Partial<Session> | undefined;
  return typeof s?.sessionId === 'string' &&
    typeof s.seq === 'number' &&
    typeof s.resumeUrl === 'string'
    ? (s as Session)
    : null;
}

export const createDiscord: AdapterFactory = (raw, ctx): PlatformAdapter => {
  // The configuration checked them against discordOptions at start.
  const options = raw as Static<typeof discordOptions>;
  const base = (options.apiBase ?? 'https://discord.com/api/v10').replace(/\/$/, '');
  const token = options.botToken;
  const auth = { authorization: `Bot ${token}` };
  /** Each route's bucket as its last answer told it: what is left, and when it refills (ms). */
  const buckets = new Map<string, { remaining: number; resetAt: number }>();
  let globalUntil = 0;
  interface Connection {
    ws: WebSocket;
    beat: NodeJS.Timeout | null;
    /** Closed, or a message could not be handled: nothing more of it is handled. */
    broken: boolean;
    /** Its dispatches, handled one at a time in order. */
    dispatches: Promise<void>;
  }
  /** The connection that is ready, and the one being opened (stop() closes both). */
  let gateway: Connection | null = null;
  let opening: Connection | null = null;

  /** Ends a connection: nothing more of it is handled, and its socket goes. */
  const end = (c: Connection | null) => {
    if (!c) return;
    c.broken = true;
    if (c.beat) clearTimeout(c.beat);
    c.ws.close(4000);
  };

  const rest = async (
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    signal: AbortSignal,
    route = path,
  ) => {
    const bucket = buckets.get(route);
    const wait = Math.max(
      globalUntil - performance.now(),
      bucket && bucket.remaining === 0 ? bucket.resetAt - performance.now() : 0,
    );
    // Within the bucket's limit: a send waits for it to refill rather than earn a 429.
    if (wait > 0) await sleep(wait, undefined, { signal });
    const res = await requestJson(method, `${base}${path}`, body, signal, auth);
    const remaining = Number(res.headers.get('x-ratelimit-remaining'));
    const resetAfter = Number(res.headers.get('x-ratelimit-reset-after'));
    if (res.headers.has('x-ratelimit-remaining') && Number.isFinite(remaining))
      buckets.set(route, {
        remaining,
        resetAt: performance.now() + (Number.isFinite(resetAfter) ? resetAfter * 1000 : 1000),
      });
    if (res.status === 429 && (res.body as { global?: unknown } | null)?.global === true)
      globalUntil =
        performance.now() + Number((res.body as { retry_after?: number }).retry_after ?? 1) * 1000;
    return resultOf(`${method} ${route}`, res);
  };

  /** Opens the Gateway; resolves once the session is ready (or resumed). */
  function open(url: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const address = new URL(url);
      address.searchParams.set('v', '10');
      address.searchParams.set('encoding', 'json');
      const ws = new WebSocket(address);
      const current: Connection = { ws, beat: null, broken: false, dispatches: Promise.resolve() };
      opening = current;
      let ready = false;
      let acked = true;
      let seq: number | null = sessionOf(ctx.loadState())?.seq ?? null;
      /** Handles one more dispatch after the ones before it; a failure ends the connection. */
      const then = (step: () => Promise<void>) => {
        current.dispatches = current.dispatches
          .then(() => (current.broken ? undefined : step()))
          .catch((err: unknown) => {
            // The session could not be saved: a new connection starts from what was.
            fail(err as Error);
            end(current);
          });
      };
      const send = (op: number, d: unknown) => {
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ op, d }));
      };
      const fail = (err: Error, kind: 'retryable' | 'permanent' = 'retryable') => {
        if (ready) return;
        current.broken = true;
        ws.terminate();
        reject(new PlatformError(`Gateway: ${err.message}`, kind, null, { cause: err }));
      };
      const heartbeat = () => {
        // The last one was never acknowledged: the connection is a zombie.
        if (!acked) return ws.terminate();
        acked = false;
        send(OP.heartbeat, seq);
      };
      signal.addEventListener('abort', () => fail(new Error('timed out before ready')), {
        once: true,
      });
      ws.on('error', fail);
      ws.on('message', (data: Buffer) => {
        let msg: { op?: number; d?: GatewayData | boolean; s?: number | null; t?: string | null };
        try {
          msg = JSON.parse(data.toString('utf8')) as typeof msg;
        } catch {
          return;
        }
        if (typeof msg !== 'object' || msg === null) return;
        if (typeof msg.s === 'number') seq = msg.s;
        switch (msg.op) {
          case OP.hello: {
            const hello = typeof msg.d === 'object' ? msg.d : undefined;
            const every = Number(hello?.heartbeat_interval ?? 41_250);
            // The first beat at a random point of the interval, as Discord asks.
            current.beat = setTimeout(() => {
              heartbeat();
              current.beat = setInterval(heartbeat, every);
              current.beat.unref();
            }, every * Math.random());
            current.beat.unref();
            const session = sessionOf(ctx.loadState());
            if (session)
              send(OP.resume, { token, session_id: session.sessionId, seq: session.seq });
            else
              send(OP.identify, {
                token,
                intents: INTENTS,
                properties: { os: 'linux', browser: 'gatehouse', device: 'gatehouse' },
              });
            return;
          }
          case OP.heartbeatAck:
            acked = true;
            return;
          case OP.heartbeat:
            send(OP.heartbeat, seq);
            return;
          case OP.reconnect:
            // Discord asks for a new connection: the session is resumed there.
            ws.close(4000);
            return;
          case OP.invalidSession: {
            // Not resumable: the next connection identifies anew, once that is saved.
            const resumable = msg.d === true;
            then(async () => {
              if (!resumable) await ctx.saveState({ ...ctx.loadState(), session: null });
              end(current);
            });
            return;
          }
          case OP.dispatch: {
            // One at a time, in order: a message that cannot be handled stops the ones after it.
            const at = seq;
            const data = typeof msg.d === 'object' ? msg.d : {};
            const type = msg.t ?? '';
            then(() => onDispatch(type, data, at));
            return;
          }
        }
      });
      const onDispatch = async (type: string, d: GatewayData, at: number | null) => {
        if (type === 'READY') {
          await ctx.saveState({
            ...ctx.loadState(),
            session: {
              sessionId: String(d.session_id),
              seq: at ?? 0,
              resumeUrl: String(d.resume_gateway_url ?? url),
            },
          });
        }
        if (type === 'READY' || type === 'RESUMED') {
          // Stopped, or replaced by a newer connect, while it opened.
          if (opening !== current) return fail(new Error('superseded while it opened'));
          opening = null;
          ready = true;
          gateway = current;
          resolve();
          return;
        }
        if (type !== 'MESSAGE_CREATE' || d.author?.bot === true) return;
        if (typeof d.channel_id !== 'string' || typeof d.content !== 'string' || at === null)
          return;
        const session = sessionOf(ctx.loadState());
        if (!session) return;
        // Handled with the sequence past it: a resume from there replays what came after.
        const handled = await ctx.onMessage(
          typeof d.author?.id === 'string'
            ? { channel: d.channel_id, text: d.content, user: d.author.id }
            : { channel: d.channel_id, text: d.content },
          { ...ctx.loadState(), session: { ...session, seq: at } },
        );
        // Not handled (the board cannot be written): the connection goes, and the resume from
        // the saved sequence brings the message again.
        if (!handled) end(current);
      };
      ws.on('close', (code) => {
        current.broken = true;
        if (current.beat) clearTimeout(current.beat);
        const fatal = FATAL_CLOSE[code];
        const closed = new Error(`closed (${code}${fatal ? `: ${fatal}` : ''})`);
        // The session is gone: saved so, after what this connection is still handling.
        if (SESSION_GONE.has(code))
          current.dispatches = current.dispatches
            .then(() => ctx.saveState({ ...ctx.loadState(), session: null }))
            .catch(() => undefined);
        if (!ready) return fail(closed, fatal ? 'permanent' : 'retryable');
        if (gateway !== current) return;
        gateway = null;
        ctx.onDisconnect(
          new PlatformError(`Gateway ${closed.message}`, fatal ? 'permanent' : 'retryable'),
        );
      });
    });
  }

  return {
    maxTextLength: 2000,
    async connect(signal) {
      await rest('GET', '/users/@me', undefined, signal);
      const previous = gateway ?? opening;
      gateway = null;
      opening = null;
      end(previous);
      // What the last connection is still handling is saved before the session is read back:
      // a resume from an older sequence would hand its messages out again.
      await previous?.dispatches;
      const session = sessionOf(ctx.loadState());
      const url =
        session?.resumeUrl ??
        options.gatewayUrl ??
        ((await rest('GET', '/gateway/bot', undefined, signal)).url as string | undefined);
      if (typeof url !== 'string')
        throw new PlatformError('GET /gateway/bot: no url in the answer', 'retryable');
      await open(url, signal);
    },
    async send(channel, text, _tag, signal) {
      await rest(
        'POST',
        `/channels/${encodeURIComponent(channel)}/messages`,
        // A title from chat must not ping anyone (@everyone, a user).
        { content: text, allowed_mentions: { parse: [] } },
        signal,
        `/channels/${channel}/messages`,
      );
    },
    async stop() {
      const current = [gateway, opening];
      gateway = null;
      opening = null;
      for (const c of current) end(c);
    },
  };
};
