// A Matrix homeserver double: the client-server API v3 calls the adapter makes, shaped as the
// specification documents them.
import { createServer } from 'node:http';
import { listen, readBody } from './doubles.js';

export interface MatrixDouble {
  url: string;
  token: string;
  userId: string;
  /**
   * 'ok', 'down' (HTTP 502), 'unauthorized' (401 M_UNKNOWN_TOKEN), 'limited' (429 on sends),
   * 'answer-lost' (a send is taken, then answered 502: the sender cannot know it went),
   * 'hang' (a request is never answered).
   */
  mode: 'ok' | 'down' | 'unauthorized' | 'limited' | 'answer-lost' | 'hang';
  /** Messages the bot sent, once per transaction id (a repeated txnId is the same message). */
  sent: { room: string; body: string; txnId: string }[];
  /** Every send request, repeats included. */
  sends: number;
  calls: string[];
  /** Rooms the bot may not write in (403 M_FORBIDDEN). */
  refuseRooms: Set<string>;
  /** Someone says `text` in `room`. */
  say(room: string, text: string, sender?: string): void;
}

/**
 * A homeserver playing the client-server API v3 as its documentation shapes it: whoami, /sync
 * with since tokens (a batch holds what came after its token), PUT send with idempotent txnIds.
 */
export async function matrixDouble(
  userId = '@gatehouse:example.org',
  token = 'syt_test_token',
): Promise<MatrixDouble> {
  const log: { room: string; event: object }[] = [];
  const byTxn = new Map<string, string>();
  const waiting = new Set<() => void>();
  const double: MatrixDouble = {
    url: '',
    token,
    userId,
    mode: 'ok',
    sent: [],
    sends: 0,
    calls: [],
    refuseRooms: new Set(),
    say(room, text, sender = '@alice:example.org') {
      log.push({
        room,
        event: {
          type: 'm.room.message',
          event_id: `$e${log.length}`,
          sender,
          origin_server_ts: Date.now(),
          content: { msgtype: 'm.text', body: text },
        },
      });
      for (const wake of waiting) wake();
    },
  };
  const batchOf = (from: number, limit: number) => {
    const join: Record<string, { timeline: { events: object[]; limited: boolean } }> = {};
    const slice = log.slice(from, from + limit);
    for (const { room, event } of slice) {
      join[room] ??= { timeline: { events: [], limited: false } };
      join[room].timeline.events.push(event);
    }
    return { next_batch: `s${from + slice.length}`, rooms: { join } };
  };
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const path = url.pathname.replace(/^\/_matrix\/client\/v3/, '');
      const body = req.method === 'PUT' ? JSON.parse((await readBody(req)).toString() || '{}') : {};
      double.calls.push(`${req.method} ${path.split('/').slice(0, 3).join('/')}`);
      const reply = (status: number, payload: object, headers: Record<string, string> = {}) =>
        res
          .writeHead(status, { 'content-type': 'application/json', ...headers })
          .end(JSON.stringify(payload));
      if (req.headers.authorization !== `Bearer ${token}` || double.mode === 'unauthorized')
        return reply(401, { errcode: 'M_UNKNOWN_TOKEN', error: 'Invalid access token passed.' });
      if (double.mode === 'hang') return;
      if (double.mode === 'down') return reply(502, { errcode: 'M_UNKNOWN', error: 'Bad gateway' });
      if (path === '/account/whoami') return reply(200, { user_id: userId, device_id: 'GH' });
      if (path === '/sync') {
        const since = url.searchParams.get('since');
        const filter = JSON.parse(url.searchParams.get('filter') ?? '{}');
        const limit = Number(filter.room?.timeline?.limit ?? 10);
        // Without a token: the history up to now (a client takes its next_batch as the start).
        if (since === null)
          return reply(200, { next_batch: `s${log.length}`, rooms: { join: {} } });
        const from = Number(since.slice(1));
        if (from >= log.length) {
          await new Promise<void>((resolve) => {
            const wake = () => {
              waiting.delete(wake);
              resolve();
            };
            waiting.add(wake);
            setTimeout(wake, Math.min(Number(url.searchParams.get('timeout') ?? 0), 300));
          });
        }
        return reply(200, batchOf(from, limit));
      }
      const send = /^\/rooms\/([^/]+)\/send\/m\.room\.message\/([^/]+)$/.exec(path);
      if (req.method === 'PUT' && send) {
        double.sends++;
        const room = decodeURIComponent(send[1]!);
        const txnId = decodeURIComponent(send[2]!);
        if (double.mode === 'limited')
          return reply(429, {
            errcode: 'M_LIMIT_EXCEEDED',
            error: 'Too Many Requests',
            retry_after_ms: 200,
          });
        if (double.refuseRooms.has(room))
          return reply(403, { errcode: 'M_FORBIDDEN', error: 'You are not in this room.' });
        const seen = byTxn.get(`${room}\0${txnId}`);
        if (seen) return reply(200, { event_id: seen });
        const eventId = `$sent${double.sent.length}`;
        byTxn.set(`${room}\0${txnId}`, eventId);
        double.sent.push({ room, body: String(body.body), txnId });
        if (double.mode === 'answer-lost') return reply(502, { errcode: 'M_UNKNOWN' });
        return reply(200, { event_id: eventId });
      }
      return reply(404, { errcode: 'M_UNRECOGNIZED', error: 'Unrecognized request' });
    })();
  });
  double.url = await listen(server);
  return double;
}
