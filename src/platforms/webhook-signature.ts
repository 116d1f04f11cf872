// Standard Webhooks signatures: webhook-id, webhook-timestamp and webhook-signature ("v1,<base64
// HMAC-SHA256 of "<id>.<timestamp>.<raw body>">), keyed by a whsec_ secret. Imports nothing of ours.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const ID_HEADER = 'webhook-id';
export const TIMESTAMP_HEADER = 'webhook-timestamp';
export const SIGNATURE_HEADER = 'webhook-signature';
/** An inbound delivery whose timestamp is further off than this is refused (the spec's window). */
export const MAX_SKEW_SECONDS = 300;
const SECRET_PREFIX = 'whsec_';
/** A key shorter than this is too easy to guess; the specification recommends 24 to 64 bytes. */
export const MIN_KEY_BYTES = 16;

/** What a secret must be, said in a config error. */
export const SECRET_FORM = `a Standard Webhooks secret: "whsec_" and the base64 of at least ${MIN_KEY_BYTES} random bytes (e.g. "whsec_$(openssl rand -base64 32)")`;

/** The key bytes of a `whsec_<base64>` secret, or null when it is not one. */
export function secretKey(secret: string): Buffer | null {
  if (!secret.startsWith(SECRET_PREFIX)) return null;
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return null;
  const key = Buffer.from(encoded, 'base64');
  return key.length >= MIN_KEY_BYTES ? key : null;
}

/** `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">` */
export function sign(key: Buffer, id: string, timestamp: string, body: string | Buffer): string {
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/**
 * Constant-time check of a webhook-signature header, which may hold several space-separated
 * signatures (a sender rotating its secret): one right v1 signature is enough.
 */
export function verifySignature(
  key: Buffer,
  id: string,
  timestamp: string,
  body: Buffer,
  header: string | undefined,
): boolean {
  if (!header) return false;
  const expected = Buffer.from(sign(key, id, timestamp, body));
  return header
    .split(' ')
    .map((given) => Buffer.from(given))
    .some((given) => given.length === expected.length && timingSafeEqual(given, expected));
}
