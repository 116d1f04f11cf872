// Identifiers and secrets: task and run ids, run tokens and their stored hashes.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const RUN_ID = /^r_[0-9a-f]{12}$/;

export const newTaskId = (): string => `t_${randomBytes(6).toString('hex')}`;
export const newRunId = (): string => `r_${randomBytes(6).toString('hex')}`;
export const newRunToken = (): string => randomBytes(32).toString('hex');

/** Run tokens are stored only as this hash. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Constant-time comparison of two secrets of any length. */
export function secretsEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}
