// One outbound HTTP request with a JSON body, its failures turned into PlatformErrors.
import { PlatformError } from './adapter.js';

export interface HttpResult {
  status: number;
  body: unknown;
  headers: Headers;
}

export async function postJson(
  url: string,
  body: unknown,
  signal: AbortSignal,
  headers: Record<string, string> = {},
  raw?: string,
): Promise<HttpResult> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: raw ?? JSON.stringify(body),
      signal,
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    throw new PlatformError(
      `request to ${new URL(url).host} failed: ${cause?.code ?? (err as Error).message}`,
      'retryable',
      null,
      { cause: err },
    );
  }
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed, headers: res.headers };
}
