// The port while the board's database cannot be reached at start: /health answers (the process
// is alive), /ready says what it waits for, every other route is a 503 that says to come back.
// Closed once the board is open, so the daemon's own server takes the port.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { BEARER_CHALLENGE } from '../errors.js';
import { secretsEqual } from '../kanban/model/ids.js';
import { tokenOf } from './auth.js';
import { notReady } from './readiness.js';

export class WaitingServer {
  private server: Server | null = null;
  private why = 'connecting';

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly apiToken: string | null,
    private readonly onError: (err: Error) => void,
  ) {}

  /** Says why the board is not open yet; the first call starts listening. */
  waiting(why: string): void {
    this.why = why;
    if (this.server) return;
    const server = createServer((req, res) => this.answer(req, res));
    // Best effort: a port it cannot have now is the daemon's own server's problem later.
    server.on('error', (err) => {
      this.onError(err);
      this.server = null;
    });
    server.listen(this.port, this.host);
    this.server = server;
  }

  /** The port it listened on (the daemon's server takes the same), or null if it never did. */
  async close(): Promise<number | null> {
    const server = this.server;
    this.server = null;
    if (!server?.listening) return null;
    const address = server.address();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return typeof address === 'object' && address !== null ? address.port : null;
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    res.setHeader('connection', 'close');
    if (req.method === 'GET' && path === '/health') return send(res, 200, { status: 'ok' });
    // Routes that authenticate otherwise (a signature, a run token) cannot be checked here:
    // their callers hear "come back", never "unauthorized", which webhook senders and
    // `gatehouse worker` take as final. They are told nothing of why.
    const own = ownAuth(req.method, path);
    if (!own && !this.authorized(req)) {
      res.setHeader('www-authenticate', BEARER_CHALLENGE);
      return send(res, 401, {
        error: {
          code: 'UNAUTHORIZED',
          message: 'this route needs Authorization: Bearer <api.token>',
        },
      });
    }
    if (req.method === 'GET' && path === '/ready')
      return send(
        res,
        503,
        notReady({
          ready: false,
          subsystems: { database: { status: 'down', detail: this.why } },
          platforms: [],
          board: {},
        }),
      );
    res.setHeader('retry-after', '1');
    send(res, 503, {
      error: {
        code: 'STORAGE_UNAVAILABLE',
        message: own
          ? 'the board database cannot be reached yet; try again'
          : `the board database cannot be reached yet: ${this.why}`,
      },
    });
  }

  private authorized(req: IncomingMessage): boolean {
    if (this.apiToken === null) return true;
    const token = tokenOf(req.headers.authorization ?? '');
    return token !== null && secretsEqual(token, this.apiToken);
  }
}

/**
 * The routes that authenticate without the API token: signed deliveries (webhooks, Slack's
 * events) and the worker routes (the run token).
 */
function ownAuth(method: string | undefined, path: string): boolean {
  return (
    method === 'POST' &&
    (/^\/platform\/[^/]+\/(?:inbound|events)$/.test(path) ||
      /^\/tasks\/[^/]+\/(?:complete|block|heartbeat)$/.test(path))
  );
}

function send(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}
