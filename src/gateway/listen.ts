// Binding the port, retrying while a replaced instance's socket is still closing.
import type { FastifyInstance } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExitCode, ExitError } from './exit-codes.js';

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
