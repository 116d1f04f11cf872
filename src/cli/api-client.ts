// One JSON call to a gatehouse API, with its errors made plain. Imports no configuration, so
// the worker helper a run calls starts quickly.
import { ExitCode, ExitError } from '../gateway/exit-codes.js';
import type { components, paths } from './api-types.js';

/** The API's schemas as its document declares them (generated: src/cli/api-types.ts). */
export type Schemas = components['schemas'];

type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;

/** The JSON body a route takes, as declared. */
export type RequestBody<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody?: infer B;
}
  ? JsonOf<NonNullable<B>>
  : never;

/** The JSON a route answers with a 2xx `status`, as declared. */
export type Answer<
  P extends keyof paths,
  M extends keyof paths[P],
  S extends number = 200,
> = paths[P][M] extends { responses: infer R } ? (S extends keyof R ? JsonOf<R[S]> : never) : never;

export interface ApiResponse {
  status: number;
  body: unknown;
}

/** One JSON request; network failures become a clear error. */
export async function callApi(
  url: string,
  method: string,
  token: string | null,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...extraHeaders };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers,
      body: body === undefined ? null : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new ExitError(ExitCode.failure, `cannot reach ${url}: ${(err as Error).message}`);
  }
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON (the metrics text, a log): keep the text.
  }
  return { status: res.status, body: parsed };
}

/** Throws with the API's own error message unless the status is 2xx. */
export function expectOk(res: ApiResponse): unknown {
  if (res.status >= 200 && res.status < 300) return res.body;
  const error = (res.body as { error?: { code?: string; message?: string } } | null)?.error;
  throw new ExitError(
    ExitCode.failure,
    error ? `${error.code ?? 'ERROR'}: ${error.message ?? ''}` : `HTTP ${res.status}`,
  );
}
