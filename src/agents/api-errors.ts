// How an agent's API error becomes an ending (docs/agents.md), for every kind alike: a rate
// limit or an overload is `rate_limited`, refused credentials `blocked`, anything else `crashed`.
import type { AgentEnding } from './types.js';

const LIMITED =
  /rate.?limit|usage limit|hit your .*limit|overloaded|too many requests|out of credits|spend cap|quota exceeded/i;
const REFUSED = /unauthori[sz]ed|forbidden|invalid api key|authentication|credentials/i;

export const CREDENTIALS_REFUSED = "the agent's credentials were refused";

/** An HTTP status the message names ("status 429", "(429)", "429 Too Many Requests"), or null. */
export function statusIn(message: string): number | null {
  const m =
    /(?:status:?\s*|\()([45]\d\d)\b|\b([45]\d\d) (?:Too Many|Unauthorized|Forbidden|Overloaded)/i.exec(
      message,
    );
  const found = m?.[1] ?? m?.[2];
  return found === undefined ? null : Number(found);
}

export function apiErrorEnding(
  status: number | null,
  message: string,
  resetAt: number | null,
): AgentEnding {
  const code = status ?? statusIn(message);
  if (code === 429 || code === 529 || (code === null && LIMITED.test(message)))
    return { kind: 'rate_limited', message, resetAt };
  if (code === 401 || code === 403 || (code === null && REFUSED.test(message)))
    return { kind: 'blocked', reason: CREDENTIALS_REFUSED };
  return { kind: 'crashed', error: message };
}

export const num = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) ? v : null;
export const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
export const obj = (v: unknown): Record<string, unknown> | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
