// Slack's request signatures: X-Slack-Signature is "v0=" and the hex HMAC-SHA256, keyed by the
// app's signing secret, of "v0:<X-Slack-Request-Timestamp>:<raw body>"; a request more than five
// minutes off is refused (Slack's own rule against replays). Imports nothing of ours.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SLACK_SIGNATURE_HEADER = 'x-slack-signature';
export const SLACK_TIMESTAMP_HEADER = 'x-slack-request-timestamp';
export const SLACK_MAX_SKEW_SECONDS = 300;

export function slackSign(secret: string, timestamp: string, body: string | Buffer): string {
  const mac = createHmac('sha256', secret).update(`v0:${timestamp}:`).update(body).digest('hex');
  return `v0=${mac}`;
}

/** Why the request is not Slack's (a stale timestamp, a wrong signature), or null when it is. */
export function slackRefusal(
  secret: string,
  timestamp: string | undefined,
  signature: string | undefined,
  body: Buffer,
  nowSeconds: number,
): string | null {
  if (!timestamp || !/^\d{1,12}$/.test(timestamp))
    return `missing or malformed ${SLACK_TIMESTAMP_HEADER}`;
  if (Math.abs(nowSeconds - Number(timestamp)) > SLACK_MAX_SKEW_SECONDS)
    return `${SLACK_TIMESTAMP_HEADER} is more than ${SLACK_MAX_SKEW_SECONDS} s off`;
  const expected = Buffer.from(slackSign(secret, timestamp, body));
  const given = Buffer.from(signature ?? '');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return `missing or wrong ${SLACK_SIGNATURE_HEADER}`;
  return null;
}
