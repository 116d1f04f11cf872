// Binding the port, retrying while a replaced instance's socket is still closing.
import type { FastifyInstance } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExitCode, ExitError } from './exit-codes.js';

/**
 * Errors that no retry or restart can fix: the configured address is wrong for this machine.
 * (EAI_AGAIN, a resolver not up yet at boot, is left to Restart=always.)
 */
const UNUSABLE_ADDRESS = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'EADDRNOTAVAIL',
  'EAFNOSUPPORT',
]);

export async function listenWithRetry(
  app: FastifyInstance,
  host: string,
  port: number,
  timeoutMs: number,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
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
      if (code !== 'EADDRINUSE' || Date.now() > deadline) {
        throw new ExitError(
          ExitCode.failure,
          `cannot listen on ${host}:${port} (${(err as Error).message})`,
        );
      }
      await sleep(50);
    }
  }
}
