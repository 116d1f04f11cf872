// The Telegram adapter (Bot API): getMe on connect, long-polling getUpdates, sendMessage.
import { setTimeout as sleep } from 'node:timers/promises';
import { PlatformError, type AdapterFactory, type PlatformAdapter } from './adapter.js';
import { postJson, type HttpResult } from './http-json.js';
import type { Static } from '../schema-types.js';
import type { telegramOptions } from './telegram-options.js';

interface BotReply {
  ok?: boolean;
  result?: unknown;
  description?: string;
  error_code?: number;
  parameters?: { retry_after?: number };
}

interface Update {
  update_id: number;
  message?: { text?: string; chat?: { id?: number | string }; from?: { id?: number | string } };
}

/** Maps a Bot API answer to its result, or to a PlatformError of the right kind. */
function resultOf(method: string, res: HttpResult): unknown {
  const reply = (res.body ?? {}) as BotReply;
  if (res.status === 200 && reply.ok === true) return reply.result;
  const what = `${method}: ${reply.description ?? `HTTP ${res.status}`}`;
  if (res.status === 401 || res.status === 404)
    return fail(new PlatformError(`${what} (check the bot token)`, 'permanent'));
  if (res.status === 429) {
    const retryAfter = (reply.parameters?.retry_after ?? 1) * 1000;
    return fail(new PlatformError(`${what} (rate limited)`, 'retryable', retryAfter));
  }
  if (res.status === 400 || res.status === 403) return fail(new PlatformError(what, 'caller'));
  return fail(new PlatformError(what, 'retryable'));
}

function fail(err: PlatformError): never {
  throw err;
}

export const createTelegram: AdapterFactory = (raw, ctx): PlatformAdapter => {
  // The configuration checked them against telegramOptions at start.
  const options = raw as Static<typeof telegramOptions>;
  const base = `${(options.apiBase ?? 'https://api.telegram.org').replace(/\/$/, '')}/bot${options.token}`;
  const pollSeconds = options.pollTimeoutSeconds ?? 30;
  let polling: AbortController | null = null;

  const call = async (method: string, body: unknown, signal: AbortSignal) =>
    resultOf(method, await postJson(`${base}/${method}`, body, signal));

  async function poll(controller: AbortController): Promise<void> {
    while (!controller.signal.aborted) {
      const offset = Number(ctx.loadState().offset ?? 0);
      const timeout = AbortSignal.any([
        controller.signal,
        AbortSignal.timeout((pollSeconds + 10) * 1000),
      ]);
      const updates = (await call(
        'getUpdates',
        { offset, timeout: pollSeconds, allowed_updates: ['message'] },
        timeout,
      )) as Update[];
      for (const update of Array.isArray(updates) ? updates : []) {
        // The offset past an update is saved in the transaction that handles it: a crash
        // neither loses it nor handles it twice.
        const past = { ...ctx.loadState(), offset: update.update_id + 1 };
        const text = update.message?.text;
        const chat = update.message?.chat?.id;
        if (typeof text !== 'string' || chat === undefined) await ctx.saveState(past);
        else if (
          !(await ctx.onMessage(withUser(String(chat), text, update.message?.from?.id), past))
        )
          break;
      }
      if (pollSeconds === 0)
        await sleep(1000, undefined, { signal: controller.signal }).catch(() => undefined);
    }
  }

  return {
    maxTextLength: 4096,
    async connect(signal) {
      await call('getMe', {}, signal);
      polling?.abort();
      const controller = new AbortController();
      polling = controller;
      poll(controller).catch((err: unknown) => {
        if (!controller.signal.aborted) ctx.onDisconnect(err as Error);
      });
    },
    async send(channel, text, _tag, signal) {
      await call('sendMessage', { chat_id: channel, text }, signal);
    },
    async stop() {
      polling?.abort();
      polling = null;
    },
  };
};

/** A message, with its sender's id when Telegram gave one. */
function withUser(channel: string, text: string, from: number | string | undefined) {
  return from === undefined ? { channel, text } : { channel, text, user: String(from) };
}
