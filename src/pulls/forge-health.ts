// Whether a repository's forge can be asked now, and when to ask again after a failure: a rate
// limit waits as the forge says, 5xx and timeouts back off from 5 s doubling to 5 minutes, and a
// refused token makes the forge `failed` (in /ready) until a request succeeds again.
import { ForgeError } from '../forges/types.js';

export type ForgeStatus = 'ok' | 'failed' | 'rate_limited' | 'unavailable';

const FIRST_BACKOFF_MS = 5_000;
const MAX_BACKOFF_MS = 5 * 60_000;

/** When to ask the forge again after `failures` failures in a row, the last one `err`. */
export function retryAt(err: unknown, failures: number, now: number): number {
  if (err instanceof ForgeError && err.kind === 'rate_limited' && err.retryAt !== null)
    return Math.max(err.retryAt, now + 1000);
  const backoff = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.max(0, failures - 1));
  return now + backoff;
}

export function statusOf(err: unknown): ForgeStatus {
  if (!(err instanceof ForgeError)) return 'unavailable';
  if (err.kind === 'auth') return 'failed';
  if (err.kind === 'rate_limited') return 'rate_limited';
  return 'unavailable';
}

/** One repository's forge: its status for /ready and the time before which it is not asked. */
export class ForgeHealth {
  status: ForgeStatus = 'ok';
  lastError: string | null = null;
  private failures = 0;
  private notBefore = 0;

  constructor(
    readonly repo: string,
    readonly provider: string,
  ) {}

  ready(now: number): boolean {
    return now >= this.notBefore;
  }

  /** When it may be asked again (epoch ms); 0 when it may be now. */
  get waitUntil(): number {
    return this.notBefore;
  }

  succeeded(): void {
    this.failures = 0;
    this.notBefore = 0;
    this.status = 'ok';
    this.lastError = null;
  }

  failed(err: unknown, now: number): void {
    this.failures++;
    this.notBefore = retryAt(err, this.failures, now);
    this.status = statusOf(err);
    this.lastError = (err as Error).message;
  }
}
