// The Matrix adapter (client-server API v3): whoami on connect, /sync long polling, text
// messages sent with PUT …/send/m.room.message/{txnId}. Inbound is exactly once: the position
// saved with each message's task is the sync token its batch came from and the ids of the batch
// already handled, so a crash repeats the batch and skips what it handled; the token past a
// batch is saved once the batch is done. A notification's txnId comes from its event and room,
// so a resend after a crash is, for the homeserver, the same message.
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { PlatformError, type AdapterFactory, type PlatformAdapter } from './adapter.js';
import { requestJson, type HttpResult } from './http-json.js';
import type { Static } from '../schema-types.js';
import type { matrixOptions } from './matrix-options.js';

interface MatrixEvent {
  type?: unknown;
  event_id?: unknown;
  sender?: unknown;
  content?: { msgtype?: unknown; body?: unknown };
}

interface SyncReply {
  next_batch?: unknown;
  rooms?: { join?: Record<string, { timeline?: { events?: MatrixEvent[]; limited?: boolean } }> };
}

/** Events of one sync at most per room: more than this while the daemon was away is a gap. */
const TIMELINE_LIMIT = 500;
const FILTER = JSON.stringify({
  room: { timeline: { limit: TIMELINE_LIMIT, types: ['m.room.message'] }, state: { types: [] } },
  presence: { types: [] },
  account_data: { types: [] },
});

/** Maps an answer to its body, or to a PlatformError of the right kind. */
function resultOf(what: string, res: HttpResult): unknown {
  if (res.status >= 200 && res.status < 300) return res.body;
  const body = (res.body ?? {}) as { errcode?: string; error?: string; retry_after_ms?: number };
  const message = `${what}: ${body.errcode ?? `HTTP ${res.status}`}${body.error ? ` (${body.error})` : ''}`;
  if (res.status === 401)
    throw new PlatformError(`${message}; check the access token`, 'permanent');
  if (res.status === 429) {
    const header = Number(res.headers.get('retry-after'));
    const retryMs =
      body.retry_after_ms ?? (Number.isFinite(header) && header > 0 ? header * 1000 : 1000);
    throw new PlatformError(`${message} (rate limited)`, 'retryable', retryMs);
  }
  if (res.status >= 400 && res.status < 500) throw new PlatformError(message, 'caller');
  throw new PlatformError(message, 'retryable');
}

/** The text messages of a sync from others, room by room in a stable order. */
function messagesOf(reply: SyncReply, self: string) {
  const found: { room: string; id: string; text: string; sender: string | null }[] = [];
  const rooms = reply.rooms?.join ?? {};
  for (const room of Object.keys(rooms).sort()) {
    for (const e of rooms[room]?.timeline?.events ?? []) {
      if (e.type !== 'm.room.message' || e.sender === self || typeof e.event_id !== 'string')
        continue;
      if (e.content?.msgtype !== 'm.text' || typeof e.content.body !== 'string') continue;
      found.push({
        room,
        id: e.event_id,
        text: e.content.body,
        sender: typeof e.sender === 'string' ? e.sender : null,
      });
    }
  }
  return found;
}

export const createMatrix: AdapterFactory = (raw, ctx): PlatformAdapter => {
  // The configuration checked them against matrixOptions at start.
  const options = raw as Static<typeof matrixOptions>;
  const base = `${options.homeserver.replace(/\/$/, '')}/_matrix/client/v3`;
  const self = options.userId;
  const auth = { authorization: `Bearer ${options.accessToken}` };
  const pollSeconds = options.pollTimeoutSeconds ?? 30;
  let polling: AbortController | null = null;
  /** The poll loop running, if any: a new one starts once it has stopped. */
  let loop: Promise<void> = Promise.resolve();

  const call = async (
    method: 'GET' | 'PUT',
    path: string,
    body: unknown,
    signal: AbortSignal,
  ): Promise<unknown> =>
    resultOf(
      `${method} ${path.split('?')[0]}`,
      await requestJson(method, `${base}${path}`, body, signal, auth),
    );

  async function poll(controller: AbortController): Promise<void> {
    while (!controller.signal.aborted) {
      const state = ctx.loadState();
      const since = typeof state.since === 'string' ? state.since : null;
      const params = new URLSearchParams({ timeout: String(pollSeconds * 1000), filter: FILTER });
      if (since !== null) params.set('since', since);
      const signal = AbortSignal.any([
        controller.signal,
        AbortSignal.timeout((pollSeconds + 10) * 1000),
      ]);
      const reply = (await call(
        'GET',
        `/sync?${params.toString()}`,
        undefined,
        signal,
      )) as SyncReply;
      const next = reply.next_batch;
      if (typeof next !== 'string')
        throw new PlatformError('GET /sync: the answer has no next_batch', 'retryable');
      // The first sync is where the history ends: what was said before is not a command now.
      if (since === null) {
        if (controller.signal.aborted) return;
        await ctx.saveState({ ...state, since: next, handled: [] });
        continue;
      }
      const handled = Array.isArray(state.handled) ? (state.handled as string[]) : [];
      const done = new Set(handled);
      let complete = true;
      for (const message of messagesOf(reply, self)) {
        // Stopped (a pause, a reconnect): the next poller goes on from what was saved.
        if (controller.signal.aborted) return;
        if (done.has(message.id)) continue;
        done.add(message.id);
        const position = { ...state, since, handled: [...done] };
        const inbound =
          message.sender === null
            ? { channel: message.room, text: message.text }
            : { channel: message.room, text: message.text, user: message.sender };
        if (!(await ctx.onMessage(inbound, position))) {
          complete = false;
          break;
        }
      }
      if (controller.signal.aborted) return;
      if (complete) await ctx.saveState({ ...ctx.loadState(), since: next, handled: [] });
      else await sleep(1000, undefined, { signal: controller.signal }).catch(() => undefined);
      if (pollSeconds === 0)
        await sleep(1000, undefined, { signal: controller.signal }).catch(() => undefined);
    }
  }

  return {
    // Matrix refuses events over 64 KiB; a text of this many UTF-16 units stays well under it.
    maxTextLength: 16_000,
    async connect(signal) {
      const who = (await call('GET', '/account/whoami', undefined, signal)) as {
        user_id?: unknown;
      };
      if (who.user_id !== self)
        throw new PlatformError(
          `GET /account/whoami: the access token is ${String(who.user_id)}'s, not ${self}'s`,
          'permanent',
        );
      polling?.abort();
      await loop;
      if (signal.aborted) throw new PlatformError('connect timed out', 'retryable');
      const controller = new AbortController();
      polling = controller;
      loop = poll(controller).catch((err: unknown) => {
        if (!controller.signal.aborted) ctx.onDisconnect(err as Error);
      });
    },
    async send(channel, text, tag, signal) {
      const room = createHash('sha256').update(channel).digest('hex').slice(0, 16);
      const txnId = tag?.eventId != null ? `gh-${tag.eventId}-${room}` : `gh-${randomUUID()}`;
      await call(
        'PUT',
        `/rooms/${encodeURIComponent(channel)}/send/m.room.message/${encodeURIComponent(txnId)}`,
        { msgtype: 'm.text', body: text },
        signal,
      );
    },
    async stop() {
      polling?.abort();
      polling = null;
    },
  };
};
