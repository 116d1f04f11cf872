// The Slack adapter: the Web API (auth.test on connect, chat.postMessage) and, given an app
// token, Socket Mode (apps.connections.open, then its websocket): every envelope is acknowledged
// once what it brought is committed, so an envelope the daemon died with is sent again by Slack
// and handled once by its event_id. The Events API arrives on an HTTP route instead
// (gateway/routes/slack-routes.ts), on any host.
import WebSocket from 'ws';
import {
  PlatformError,
  type AdapterFactory,
  type InboundMessage,
  type PlatformAdapter,
} from './adapter.js';
import { postJson, type HttpResult } from './http-json.js';
import type { Static } from '../schema-types.js';
import type { slackOptions } from './slack-options.js';

/** Web API errors that only an operator can fix (a token revoked, a scope missing). */
const PERMANENT = new Set([
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'missing_scope',
  'not_allowed_token_type',
]);
/** Errors of Slack itself, worth trying again. */
const RETRYABLE = new Set([
  'ratelimited',
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
]);

/** Maps a Web API answer to its body, or to a PlatformError of the right kind. */
function resultOf(method: string, res: HttpResult): Record<string, unknown> {
  const body = (res.body ?? {}) as { ok?: unknown; error?: unknown };
  if (res.status === 429) {
    const seconds = Number(res.headers.get('retry-after'));
    const retryMs = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1000;
    throw new PlatformError(`${method}: rate limited`, 'retryable', retryMs);
  }
  if (res.status === 200 && body.ok === true) return body;
  const error = typeof body.error === 'string' ? body.error : `HTTP ${res.status}`;
  if (PERMANENT.has(error))
    throw new PlatformError(`${method}: ${error} (check the token and its scopes)`, 'permanent');
  if (res.status >= 500 || RETRYABLE.has(error) || res.status !== 200)
    throw new PlatformError(`${method}: ${error}`, 'retryable');
  throw new PlatformError(`${method}: ${error}`, 'caller');
}

/** How often Socket Mode's link is pinged; a ping unanswered by the next is a dead link. */
const PING_MS = 10_000;

/** Slack's three control characters, escaped as its formatting rules ask. */
function escapeText(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** A message someone wrote in a channel (not a bot's, not an edit or a join), or null. */
export function slackMessage(event: unknown): InboundMessage | null {
  const e = (event ?? {}) as Record<string, unknown>;
  if (e.type !== 'message' || e.subtype !== undefined || e.bot_id !== undefined) return null;
  if (typeof e.channel !== 'string' || typeof e.text !== 'string') return null;
  return typeof e.user === 'string'
    ? { channel: e.channel, text: e.text, user: e.user }
    : { channel: e.channel, text: e.text };
}

export const createSlack: AdapterFactory = (raw, ctx): PlatformAdapter => {
  // The configuration checked them against slackOptions at start.
  const options = raw as Static<typeof slackOptions>;
  const base = (options.apiBase ?? 'https://slack.com/api').replace(/\/$/, '');
  const botToken = options.botToken;
  const appToken = options.appToken;
  /** The connection that said hello, and the one being opened (stop() closes both). */
  let socket: WebSocket | null = null;
  let opening: WebSocket | null = null;

  const call = async (method: string, body: object, signal: AbortSignal, token = botToken) =>
    resultOf(
      method,
      await postJson(`${base}/${method}`, body, signal, { authorization: `Bearer ${token}` }),
    );

  /** An envelope: its message handled (once, by event_id), then acknowledged. */
  async function onEnvelope(ws: WebSocket, envelope: Record<string, unknown>): Promise<void> {
    const id = envelope.envelope_id;
    if (typeof id !== 'string') return;
    const payload = (envelope.payload ?? {}) as { event_id?: unknown; event?: unknown };
    const message = envelope.type === 'events_api' ? slackMessage(payload.event) : null;
    if (message && typeof payload.event_id === 'string') {
      // Not handled (the board cannot be written): not acknowledged, so Slack sends it again.
      if (!(await ctx.onDelivery(message, payload.event_id))) return;
    }
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ envelope_id: id }));
  }

  /** Opens Socket Mode's websocket; resolves at its hello. */
  function openSocket(url: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      opening = ws;
      let hello = false;
      // A link that died without a word (no close ever comes) is found by its pings.
      let answered = true;
      const pinger = setInterval(() => {
        if (!answered) return ws.terminate();
        answered = false;
        if (ws.readyState === WebSocket.OPEN) ws.ping();
      }, PING_MS);
      pinger.unref();
      ws.on('pong', () => (answered = true));
      const fail = (err: Error) => {
        if (hello) return;
        ws.terminate();
        reject(new PlatformError(`Socket Mode: ${err.message}`, 'retryable', null, { cause: err }));
      };
      signal.addEventListener('abort', () => fail(new Error('timed out before hello')), {
        once: true,
      });
      ws.on('error', fail);
      ws.on('message', (data: Buffer) => {
        answered = true;
        let message: Record<string, unknown>;
        try {
          message = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
        } catch {
          return;
        }
        if (typeof message !== 'object' || message === null) return;
        if (message.type === 'hello') {
          // Stopped, or replaced by a newer connect, while it opened.
          if (opening !== ws) return fail(new Error('superseded while it opened'));
          opening = null;
          hello = true;
          socket = ws;
          resolve();
        } else if (message.type === 'disconnect') {
          // Slack asks for a new connection (a refresh, or the server going away).
          ws.close();
        } else onEnvelope(ws, message).catch(() => ws.close());
      });
      ws.on('close', (code) => {
        clearInterval(pinger);
        if (!hello) return fail(new Error(`closed before hello (${code})`));
        if (socket !== ws) return;
        socket = null;
        ctx.onDisconnect(new PlatformError(`Socket Mode closed (${code})`, 'retryable'));
      });
    });
  }

  return {
    // chat.postMessage cuts texts longer than this.
    maxTextLength: 40_000,
    // With the Events API alone, Slack comes to any host: nothing to hold open.
    connectionless: appToken === undefined,
    async connect(signal) {
      await call('auth.test', {}, signal);
      if (appToken === undefined) return;
      const opened = await call('apps.connections.open', {}, signal, appToken);
      if (typeof opened.url !== 'string')
        throw new PlatformError('apps.connections.open: no url in the answer', 'retryable');
      const previous = [socket, opening];
      socket = null;
      opening = null;
      for (const ws of previous) ws?.terminate();
      await openSocket(opened.url, signal);
    },
    async send(channel, text, _tag, signal) {
      // Slack reads <…> as links and mentions (<!channel>): a title from chat is text only.
      await call('chat.postMessage', { channel, text: escapeText(text) }, signal);
    },
    async stop() {
      const current = [socket, opening];
      socket = null;
      opening = null;
      for (const ws of current) ws?.close();
    },
  };
};
