// The board's pool on PostgreSQL when the server ends a session at the worst moment: right after
// it said the session was ready, in the same packet, before the board had the connection in hand.
import { createServer, connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/kanban/store/postgres/open.js';
import { testSchema } from '../helpers/postgres.js';

/** PostgreSQL's ErrorResponse for pg_terminate_backend: FATAL 57P01. */
function terminated(): Buffer {
  const fields = [
    'SFATAL',
    'VFATAL',
    'C57P01',
    'Mterminating connection due to administrator command',
  ];
  const body = Buffer.concat([...fields.map((f) => Buffer.from(`${f}\0`)), Buffer.from([0])]);
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

/**
 * Forwards to the server; once armed, the next new session's first ReadyForQuery is followed,
 * in the same write, by the server's "terminating connection" and the end of the socket.
 */
async function cuttingProxy(to: number) {
  const sockets = new Set<Socket>();
  let armed = false;
  let cuts = 0;
  const server = createServer((client) => {
    const upstream = connect(to, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream);
    const cut = armed;
    armed = false;
    let pending = Buffer.alloc(0);
    let ready = false;
    upstream.on('data', (chunk: Buffer) => {
      if (!cut || ready) {
        if (!ready) client.write(chunk);
        return;
      }
      pending = Buffer.concat([pending, chunk]);
      // Backend messages: a type byte and a length that counts itself.
      let at = 0;
      while (pending.length >= at + 5) {
        const length = pending.readInt32BE(at + 1);
        if (pending.length < at + 1 + length) break;
        const type = String.fromCharCode(pending[at] ?? 0);
        at += 1 + length;
        if (type === 'Z') {
          ready = true;
          cuts++;
          client.end(Buffer.concat([pending.subarray(0, at), terminated()]));
          upstream.destroy();
          return;
        }
      }
    });
    upstream.on('end', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    arm: () => (armed = true),
    cuts: () => cuts,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('the board on PostgreSQL', () => {
  it('lives through a session ended in the packet that said it was ready: the transaction fails as unavailable, the next one works', async () => {
    const { schema, url } = testSchema();
    const target = new URL(url);
    const proxy = await cuttingProxy(Number(target.port));
    target.host = `127.0.0.1:${proxy.port}`;
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    const store = await openPostgresStore({ url: target.toString(), schema, poolSize: 4 });
    try {
      // The first transaction holds the pool's one session; the second needs a new session,
      // and that is the one the server ends.
      let release = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      let inHand = () => {};
      const holding = new Promise<void>((resolve) => (inHand = resolve));
      const first = store.transaction(async (tx) => {
        await tx.tasks.get('t_000000000000');
        inHand();
        await held;
        return 'first';
      });
      first.catch(() => undefined);
      await holding;
      proxy.arm();
      const second = store.transaction(async (tx) => tx.tasks.get('t_000000000000'));
      const failed = await second.then(
        () => null,
        (err: unknown) => err,
      );
      release();
      expect(await first).toBe('first');
      expect(proxy.cuts()).toBe(1);
      expect(failed).not.toBeNull();
      expect(store.failureOf(failed)?.kind).toBe('unavailable');
      // Nothing escaped as an uncaught error (the daemon would shut down on it).
      await new Promise((resolve) => setImmediate(resolve));
      expect(uncaught).toEqual([]);
      expect(await store.transaction(async (tx) => tx.tasks.get('t_000000000000'))).toBeNull();
    } finally {
      process.off('uncaughtException', onUncaught);
      await store.close();
      await proxy.close();
    }
  });
});
