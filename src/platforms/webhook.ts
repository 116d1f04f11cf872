// The webhook adapter: signed outbound POSTs; inbound POSTs verified by the same HMAC.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { PlatformError, type AdapterFactory, type PlatformAdapter } from './adapter.js';
import { postJson } from './http-json.js';

export const SIGNATURE_HEADER = 'x-gatehouse-signature';

/** `sha256=<hex HMAC-SHA256 of the raw body>` */
export function sign(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Constant-time check of a signature header against the raw body. */
export function verifySignature(secret: string, body: Buffer, header: string | undefined): boolean {
  if (!header) return false;
  const expected = Buffer.from(sign(secret, body));
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
      // eventId lets a receiver drop the rare repeat (a crash between a send and its record).
      const body = JSON.stringify(tag === null ? { channel, text } : { channel, text, ...tag });
      const res = await postJson(
        url,
        null,
        signal,
        { [SIGNATURE_HEADER]: sign(secret, body) },
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
