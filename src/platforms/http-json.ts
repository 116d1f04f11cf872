// One outbound HTTP request with a JSON body, its failures turned into PlatformErrors.
import { PlatformError } from './adapter.js';

export interface HttpResult {
  status: number;
  body: unknown;
  headers: Headers;
}

/** A platform's answer is read up to this size; a longer one is a failure, not a memory spike. */
export const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

async function readCapped(res: Response, url: string): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? 0);
  const tooLarge = () =>
    new PlatformError(
      `${new URL(url).host} answered with more than ${MAX_RESPONSE_BYTES} bytes`,
      'retryable',
    );
  if (declared > MAX_RESPONSE_BYTES) {
    await res.body?.cancel();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += (chunk as Uint8Array).byteLength;
    if (size > MAX_RESPONSE_BYTES) {
      await res.body?.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(Buffer.from(chunk as Uint8Array));
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function postJson(
  url: string,
  body: unknown,
  signal: AbortSignal,
  headers: Record<string, string> = {},
  raw?: string,
): Promise<HttpResult> {
  return requestJson('POST', url, body, signal, headers, raw);
}

/** One request; a GET sends no body (`body` undefined). */
export async function requestJson(
  method: 'GET' | 'POST' | 'PUT',
  url: string,
  body: unknown,
  signal: AbortSignal,
  headers: Record<string, string> = {},
  raw?: string,
): Promise<HttpResult> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: { ...(method === 'GET' ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(method === 'GET' ? {} : { body: raw ?? JSON.stringify(body) }),
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
  const text = await readCapped(res, url);
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed, headers: res.headers };
}
