// The API's token when any profile is sandboxed and none is configured (docs/sandbox.md): an
// agent reaches the loopback, so the API must not take it for an operator. Made at the first
// start in <dataDir>/api-token (0600) and kept; the CLI reads it there, and a person gets into
// the dashboard through a one-time login link printed at start.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/schema.js';

export const API_TOKEN_FILE = 'api-token';

/** The token kept in the data dir, or null when there is none (or it is not one). */
export function readApiTokenFile(dataDir: string): string | null {
  try {
    const token = readFileSync(join(dataDir, API_TOKEN_FILE), 'utf8').trim();
    return /^[0-9a-f]{64}$/.test(token) ? token : null;
  } catch {
    return null;
  }
}

/** Whether the API needs a token of its own making: a sandboxed profile and none configured. */
export function needsOwnToken(config: Config): boolean {
  return (
    config.api.token === null &&
    Object.values(config.workers.profiles).some((p) => p.sandbox.kind === 'bwrap')
  );
}

/**
 * The configuration with the API's token: as configured, or the data dir's (made once when
 * missing). `own` says whether it is the data dir's.
 */
export function withApiToken(config: Config): { config: Config; own: boolean } {
  if (!needsOwnToken(config)) return { config, own: false };
  let token = readApiTokenFile(config.dataDir);
  if (token === null) {
    token = randomBytes(32).toString('hex');
    writeFileSync(join(config.dataDir, API_TOKEN_FILE), `${token}\n`, { mode: 0o600 });
  }
  return { config: { ...config, api: { ...config.api, token } }, own: true };
}

/** One-time login codes for the dashboard: each exchanged for the token once. */
export class LoginCodes {
  private readonly codes = new Set<string>();

  issue(): string {
    const code = randomBytes(24).toString('base64url');
    this.codes.add(code);
    return code;
  }

  /** Whether `code` is one given out and not used yet; it is used now. */
  redeem(code: string): boolean {
    for (const known of this.codes) {
      const a = Buffer.from(known);
      const b = Buffer.from(code);
      if (a.length === b.length && timingSafeEqual(a, b)) {
        this.codes.delete(known);
        return true;
      }
    }
    return false;
  }
}
