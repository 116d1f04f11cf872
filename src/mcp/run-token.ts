// A run's own MCP token (docs/mcp.md): `gmcp_<runId>_<mac>`, the MAC of the run id under a secret
// of this data dir (0600, made at first use). Nothing is stored per run: a token names its run,
// and the run's being live on this host is what makes it good.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const FILE = 'mcp-secret';
const RUN_ID = /^r_[0-9a-f]{12}$/;

export class RunTokens {
  private secret: Buffer | null = null;

  constructor(private readonly dataDir: string) {}

  private key(): Buffer {
    if (this.secret) return this.secret;
    const path = join(this.dataDir, FILE);
    try {
      this.secret = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64url');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      const made = randomBytes(32);
      try {
        writeFileSync(path, made.toString('base64url'), { mode: 0o600, flag: 'wx' });
        this.secret = made;
      } catch (raced) {
        // Another start made it first: theirs is the secret.
        if ((raced as NodeJS.ErrnoException).code !== 'EEXIST') throw raced;
        this.secret = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64url');
      }
    }
    if (this.secret.length < 32) throw new Error(`${path} holds no secret: remove it`);
    return this.secret;
  }

  private mac(runId: string): string {
    return createHmac('sha256', this.key()).update(runId).digest('base64url');
  }

  /** The token of run `runId`. */
  of(runId: string): string {
    return `gmcp_${runId}_${this.mac(runId)}`;
  }

  /** The run a token names, if it is this data dir's token of it; else null. */
  runOf(token: string): string | null {
    const m = /^gmcp_(r_[0-9a-f]{12})_([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m || !RUN_ID.test(m[1]!)) return null;
    const want = Buffer.from(this.mac(m[1]!));
    const got = Buffer.from(m[2]!);
    return want.length === got.length && timingSafeEqual(want, got) ? m[1]! : null;
  }
}
