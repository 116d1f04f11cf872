// The webhook adapter, per the Standard Webhooks specification: outbound POSTs and inbound
// deliveries carry webhook-id, webhook-timestamp and webhook-signature ("v1,<base64 HMAC-SHA256
// of "<id>.<timestamp>.<raw body>">), keyed by a whsec_ secret, so off-the-shelf signers and
// verifiers interoperate.
import { randomUUID } from 'node:crypto';
import { PlatformError, type AdapterFactory, type PlatformAdapter } from './adapter.js';
import { postJson } from './http-json.js';
import type { Static } from '../schema-types.js';
import type { webhookOptions } from './webhook-options.js';
import {
  ID_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  secretKey,
  sign,
} from './webhook-signature.js';

export const createWebhook: AdapterFactory = (raw, ctx): PlatformAdapter => {
  // The configuration checked them against webhookOptions at start.
  const options = raw as Static<typeof webhookOptions>;
  const url = options.url;
  const key = secretKey(options.secret)!;
  return {
    // Nothing to hold open: the receiver is reached per message.
    connectionless: true,
    connect: async () => undefined,
    async send(channel, text, tag, signal) {
      const body = JSON.stringify(tag === null ? { channel, text } : { channel, text, ...tag });
      const timestamp = String(Math.floor(ctx.clock.wall() / 1000));
      // The event id is the delivery id, the same on every retry, so a receiver can drop the
      // rare repeat (a crash between a send and its record); replies and notices get their own.
      const id = tag?.eventId != null ? `event-${tag.eventId}` : `msg_${randomUUID()}`;
      const res = await postJson(
        url,
        null,
        signal,
        {
          [ID_HEADER]: id,
          [TIMESTAMP_HEADER]: timestamp,
          [SIGNATURE_HEADER]: sign(key, id, timestamp, body),
        },
        body,
      );
      if (res.status >= 200 && res.status < 300) return;
      const kind =
        res.status === 401 || res.status === 403
          ? 'permanent'
          : res.status >= 500 || res.status === 429
            ? 'retryable'
            : 'caller';
      throw new PlatformError(`webhook answered HTTP ${res.status}`, kind);
    },
    stop: async () => undefined,
  };
};
