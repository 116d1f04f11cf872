// Binding the port, retrying while a replaced instance's socket is still closing.
import type { FastifyInstance } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExitCode, ExitError } from './exit-codes.js';

/** Errors that no retry or restart can fix: the configured address is wrong for this machine. */
const UNUSABLE_ADDRESS = new Set(['ENOTFOUND', 'EAI_NONAME', 'EADDRNOTAVAIL', 'EAFNOSUPPORT']);
/**
 * Errors that pass: a replaced instance's socket still closing, a resolver not up yet at boot
 * (EAI_AGAIN). Retried until the deadline, then exit 1, which the unit restarts.
 */
const PASSING = new Set(['EADDRINUSE', 'EAI_AGAIN']);

export async function listenWithRetry(
  app: FastifyInstance,
  host: string,
  port: number,
  timeoutMs: number,
): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      await app.listen({ host, port });
      const address = app.server.address();
      return typeof address === 'object' && address !== null ? address.port : port;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== undefined && UNUSABLE_ADDRESS.has(code)) {
        throw new ExitError(
          ExitCode.config,
          `configuration error: server.host ${host}: cannot listen there (${code})`,
        );
      }
      if (code === undefined || !PASSING.has(code) || performance.now() > deadline) {
        const why =
          code === 'EAI_AGAIN'
            ? `the resolver does not answer for ${host} yet (EAI_AGAIN); a restart tries again`
            : (err as Error).message;
        throw new ExitError(ExitCode.failure, `cannot listen on ${host}:${port} (${why})`);
      }
      await sleep(50);
    }
  }
}
