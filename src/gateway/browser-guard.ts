// What stops a web page from driving the API (docs/api.md "Browsers"): a Host allow-list against
// DNS rebinding (421), and for state-changing requests and websocket upgrades an Origin that must
// be the daemon's own (403). The 415 for non-JSON bodies comes from having no other parser.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors.js';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

/** "Example.COM:8787" → "example.com"; "[::1]:80" → "::1"; a trailing dot dropped. */
function hostName(hostHeader: string): string {
  const host = hostHeader.trim().toLowerCase();
  const bare = host.startsWith('[')
    ? host.slice(1, host.indexOf(']') < 0 ? undefined : host.indexOf(']'))
    : host.split(':').length === 2
      ? host.split(':')[0]!
      : host;
  return bare.endsWith('.') ? bare.slice(0, -1) : bare;
}

/** "gate.example:8443" → "8443"; "[::1]:80" → "80"; no port → "". */
function hostPort(hostHeader: string): string {
  const host = hostHeader.trim();
  const afterName = host.startsWith('[') ? host.slice(host.indexOf(']') + 1) : host;
  const parts = afterName.split(':');
  return parts.length === 2 ? parts[1]! : '';
}

function isLoopbackName(name: string): boolean {
  return (
    LOOPBACK_NAMES.includes(name) || /^127(\.\d{1,3}){3}$/.test(name) || name.endsWith('.localhost')
  );
}

export interface BrowserGuardOptions {
  /** server.host: accepted as a Host name unless it is a wildcard bind. */
  serverHost: string;
  /** server.allowedHosts: names a reverse proxy or Tailscale Serve puts in Host or Origin. */
  allowedHosts: readonly string[];
}

function hostAllowed(name: string, opts: BrowserGuardOptions): boolean {
  if (isLoopbackName(name)) return true;
  if (name === hostName(opts.serverHost) && !['0.0.0.0', '::'].includes(name)) return true;
  return opts.allowedHosts.some((allowed) => hostName(allowed) === name);
}

/** The Origin is the daemon's own: the same host and port the request was sent to, or an allowed name. */
function originAllowed(origin: string, req: FastifyRequest, opts: BrowserGuardOptions): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (url.host === (req.headers.host ?? '').toLowerCase()) return true;
  // An allowed name is allowed on its own port only (the scheme's default unless it names
  // one): another service on the same name is another origin.
  const defaultPort = url.protocol === 'https:' ? '443' : '80';
  return opts.allowedHosts.some((allowed) => {
    const port = hostPort(allowed);
    return (
      hostName(allowed) === hostName(url.host) && (port === defaultPort ? '' : port) === url.port
    );
  });
}

export const browserGuard = fp(async (app: FastifyInstance, opts: BrowserGuardOptions) => {
  app.addHook('onRequest', async (req) => {
    const host = req.headers.host;
    if (host === undefined || !hostAllowed(hostName(host), opts)) {
      throw new AppError(
        'MISDIRECTED_REQUEST',
        `Host "${host ?? ''}" is not this gatehouse's: use a loopback name or server.host, or add it to server.allowedHosts`,
      );
    }
    const upgrade = req.headers.upgrade?.toLowerCase() === 'websocket';
    const origin = req.headers.origin;
    if ((STATE_CHANGING.has(req.method) || upgrade) && origin !== undefined) {
      if (!originAllowed(origin, req, opts)) {
        throw new AppError(
          'FORBIDDEN_ORIGIN',
          `a request from the web page at ${origin} cannot change anything here; add its host to server.allowedHosts if it is yours`,
        );
      }
    }
  });
});
