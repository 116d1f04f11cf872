// One forge's HTTP: the token in each request's headers (never in a URL), a deadline, answers
// read up to a size, conditional GETs with ETag, and every failure turned into one ForgeError.
import type { ForgeProvider } from '../config/schema.js';
import { ForgeError } from './types.js';

/** How a request ended, for gatehouse_forge_requests_total. */
export type RequestOutcome =
  'ok' | 'not_modified' | 'auth' | 'rate_limited' | 'unavailable' | 'refused' | 'not_found';

export interface ForgeHttpOptions {
  provider: ForgeProvider;
  base: string;
  headers: Record<string, string>;
  timeoutMs?: number;
  onRequest?: (outcome: RequestOutcome) => void;
  now?: () => number;
}

export interface Answer<T> {
  status: number;
  body: T;
  headers: Headers;
}

/** A forge's answer is read up to this size; a larger one is a failure, not a memory spike. */
const MAX_BYTES = 8 * 1024 * 1024;
/** Remembered answers for conditional requests: one per URL, the oldest forgotten first. */
const MAX_CACHED = 5000;

export class ForgeHttp {
  private readonly cache = new Map<string, { etag: string; body: unknown }>();
  private readonly now: () => number;

  constructor(private readonly opts: ForgeHttpOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** GET of a JSON answer, conditional when an earlier answer had an ETag. */
  async get<T>(path: string, conditional = false): Promise<Answer<T> & { unchanged: boolean }> {
    const url = this.url(path);
    const cached = conditional ? this.cache.get(url) : undefined;
    const res = await this.call(
      'GET',
      url,
      undefined,
      cached ? { 'if-none-match': cached.etag } : {},
    );
    if (res.status === 304 && cached) {
      this.opts.onRequest?.('not_modified');
      // Moved to the end: the most recently used is the last forgotten.
      this.cache.delete(url);
      this.cache.set(url, { etag: res.headers.get('etag') ?? cached.etag, body: cached.body });
      return { status: 304, body: cached.body as T, headers: res.headers, unchanged: true };
    }
    const answer = await this.read<T>(res, 'GET', path);
    const etag = res.headers.get('etag');
    if (conditional && etag) {
      this.cache.delete(url);
      this.cache.set(url, { etag, body: answer.body });
      if (this.cache.size > MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
    }
    return { ...answer, unchanged: false };
  }

  /** A request with a JSON body; statuses in `answers` are returned, not thrown (409, 422). */
  async request<T>(
    method: 'POST' | 'PUT' | 'PATCH',
    path: string,
    body: unknown,
    answers: number[] = [],
  ): Promise<Answer<T>> {
    const res = await this.call(method, this.url(path), JSON.stringify(body), {
      'content-type': 'application/json',
    });
    if (answers.includes(res.status)) {
      this.opts.onRequest?.('refused');
      return { status: res.status, body: parse<T>(await capped(res)), headers: res.headers };
    }
    return this.read<T>(res, method, path);
  }

  /**
   * A text answer (a job's log), following one redirect to where the forge keeps it: without
   * the token, which is for the forge alone.
   */
  async text(path: string, maxBytes: number): Promise<string | null> {
    let res = await this.call('GET', this.url(path), undefined, {}, 'manual');
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel().catch(() => undefined);
      res = await fetchWithin(location, { redirect: 'follow' }, this.opts.timeoutMs ?? 30_000);
    }
    if (res.status === 404 || res.status === 410) {
      await res.body?.cancel().catch(() => undefined);
      this.opts.onRequest?.('not_found');
      return null;
    }
    if (!res.ok) await this.read(res, 'GET', path);
    this.opts.onRequest?.('ok');
    return tail(await capped(res, Number.MAX_SAFE_INTEGER), maxBytes);
  }

  private url(path: string): string {
    return `${this.opts.base}${path}`;
  }

  private async call(
    method: string,
    url: string,
    body: string | undefined,
    headers: Record<string, string>,
    redirect: 'follow' | 'manual' = 'follow',
  ): Promise<Response> {
    try {
      return await fetchWithin(
        url,
        { method, body, redirect, headers: { ...this.opts.headers, ...headers } },
        this.opts.timeoutMs ?? 30_000,
      );
    } catch (err) {
      this.opts.onRequest?.('unavailable');
      const why = (err as Error).name === 'TimeoutError' ? 'timed out' : (err as Error).message;
      throw new ForgeError('unavailable', null, `${this.opts.provider}: ${method} ${url}: ${why}`);
    }
  }

  private async read<T>(res: Response, method: string, path: string): Promise<Answer<T>> {
    const text = await capped(res).catch((err: unknown) => {
      this.opts.onRequest?.('unavailable');
      throw new ForgeError('unavailable', res.status, (err as Error).message);
    });
    if (res.ok) {
      this.opts.onRequest?.('ok');
      return { status: res.status, body: parse<T>(text), headers: res.headers };
    }
    const error = this.failure(res, text, `${method} ${path}`);
    this.opts.onRequest?.(error.kind);
    throw error;
  }

  /** What a refusal means: a rate limit (and until when), the token, the forge, or the request. */
  private failure(res: Response, text: string, what: string): ForgeError {
    const message = `${this.opts.provider} answered ${what} with ${res.status}: ${messageOf(text)}`;
    const h = res.headers;
    const retryAfter = Number(h.get('retry-after'));
    const remaining = h.get('x-ratelimit-remaining') ?? h.get('ratelimit-remaining');
    const limited =
      res.status === 429 ||
      (res.status === 403 &&
        (remaining === '0' || h.has('retry-after') || /rate limit/i.test(text)));
    if (limited) {
      const reset = Number(h.get('x-ratelimit-reset') ?? h.get('ratelimit-reset'));
      const at =
        Number.isFinite(retryAfter) && retryAfter > 0
          ? this.now() + retryAfter * 1000
          : Number.isFinite(reset) && reset > 0
            ? reset * 1000
            : null;
      // At least a minute when the forge says nothing of when (docs/pull-requests.md).
      return new ForgeError(
        'rate_limited',
        res.status,
        message,
        Math.max(at ?? 0, this.now() + (at === null ? 60_000 : 0)),
      );
    }
    if (res.status === 401 || res.status === 403)
      return new ForgeError('auth', res.status, message);
    if (res.status === 404) return new ForgeError('not_found', res.status, message);
    if (res.status >= 500) return new ForgeError('unavailable', res.status, message);
    return new ForgeError('refused', res.status, message);
  }
}

function fetchWithin(url: string, init: RequestInit, timeoutMs: number): Promise<Response> {
  return fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
}

async function capped(res: Response, limit = MAX_BYTES): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  let kept = 0;
  for await (const chunk of res.body ?? []) {
    const bytes = Buffer.from(chunk as Uint8Array);
    size += bytes.byteLength;
    if (limit === Number.MAX_SAFE_INTEGER) {
      // A log: only its tail is wanted, so older chunks go once enough newer ones are kept.
      chunks.push(bytes);
      kept += bytes.byteLength;
      while (chunks.length > 1 && kept - chunks[0]!.byteLength >= MAX_BYTES)
        kept -= chunks.shift()!.byteLength;
      continue;
    }
    if (size > limit) {
      await res.body?.cancel().catch(() => undefined);
      throw new Error(`the answer is larger than ${limit} bytes`);
    }
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parse<T>(text: string): T {
  if (text.trim() === '') return null as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ForgeError(
      'unavailable',
      null,
      `the forge answered with something that is not JSON: ${text.slice(0, 120)}`,
    );
  }
}

/** The forge's own words for a failure, short. */
function messageOf(text: string): string {
  try {
    const body = JSON.parse(text) as { message?: unknown; error?: unknown };
    const said = body.message ?? body.error;
    const words = typeof said === 'string' ? said : JSON.stringify(said);
    if (words) return words.slice(0, 300);
  } catch {
    // not JSON
  }
  return text.trim().slice(0, 300) || 'no message';
}

/** The last `maxBytes` of a text, from a line's start where one is near. */
function tail(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.byteLength <= maxBytes) return text;
  const cut = bytes.subarray(bytes.byteLength - maxBytes).toString('utf8');
  const newline = cut.indexOf('\n');
  return newline >= 0 && newline < 200 ? cut.slice(newline + 1) : cut;
}
