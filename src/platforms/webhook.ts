// The webhook adapter: signed outbound POSTs; inbound POSTs verified by the same HMAC.
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { PlatformError, type AdapterFactory, type PlatformAdapter } from './adapter.js';
import { postJson } from './http-json.js';

export const SIGNATURE_HEADER = 'x-gatehouse-signature';
export const TIMESTAMP_HEADER = 'x-gatehouse-timestamp';
export const DELIVERY_HEADER = 'x-gatehouse-delivery';
/** An inbound delivery whose timestamp is further off than this is refused (SPEC §7). */
export const MAX_SKEW_SECONDS = 300;

/** `sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">` */
export function sign(secret: string, timestamp: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
}

/** Constant-time check of a signature header against the timestamp and raw body. */
export function verifySignature(
  secret: string,
  timestamp: string,
  body: Buffer,
  header: string | undefined,
): boolean {
  if (!header) return false;
  const expected = Buffer.from(sign(secret, timestamp, body));
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export const createWebhook: AdapterFactory = (options): PlatformAdapter => {
  const url = options.url as string;
  const secret = options.secret as string;
  return {
    // Nothing to hold open: the receiver is reached per message.
    connect: async () => undefined,
    async send(channel, text, tag, signal) {
      const body = JSON.stringify(tag === null ? { channel, text } : { channel, text, ...tag });
      const timestamp = String(Math.floor(Date.now() / 1000));
      // The event id is the delivery id, so a receiver can drop the rare repeat (a crash
      // between a send and its record); replies and notices get one of their own.
      const delivery = tag?.eventId != null ? `event-${tag.eventId}` : randomUUID();
      const res = await postJson(
        url,
        null,
        signal,
        {
          [TIMESTAMP_HEADER]: timestamp,
          [DELIVERY_HEADER]: delivery,
          [SIGNATURE_HEADER]: sign(secret, timestamp, body),
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
