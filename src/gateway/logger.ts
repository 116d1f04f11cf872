// The daemon's structured logger (pino), shared by Fastify and every subsystem.
import { pino, type Logger } from 'pino';

export function createLogger(level = 'info'): Logger {
  return pino({ level, base: { pid: process.pid } });
}
