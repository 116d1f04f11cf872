// Idempotency-Key on the routes that create (docs/api.md), on either engine: a retry gets the first
// answer and makes nothing, twins make one, a key sent again elsewhere or with another body is
// refused, a twin held past the wait is told so, and a key is forgotten after its lifetime.
import { wallClock } from '../../src/clock.js';
import { describe, expect, it } from 'vitest';
import { api, startGateway } from '../helpers/app.js';
import { tempDir } from '../helpers/daemon.js';
import { holdBoard } from '../helpers/store.js';
import { waitFor } from '../helpers/wait.js';

const keyed = (key: string) => ({ 'idempotency-key': key });

describe('Idempotency-Key', () => {
  it('answers a retried POST /tasks with the first answer, marked as a replay, and creates one task', async () => {
    const gw = await startGateway({ workers: { maxConcurrent: 0 } });
    const body = { title: 'deploy once', priority: 3 };
    const first = await api(gw.url, 'POST', '/tasks', body, keyed('deploy-2026-12-01'));
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    for (let i = 0; i < 2; i++) {
      const again = await api(gw.url, 'POST', '/tasks', body, keyed('deploy-2026-12-01'));
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(first.body);
    }
    // Another key is another task; no key, as before, one task a request.
    const another = await api(gw.url, 'POST', '/tasks', body, keyed('deploy-2'));
    expect(another.status).toBe(201);
    await api(gw.url, 'POST', '/tasks', body);
    expect((await gw.kanban.board.counts()).ready).toBe(3);
    expect(
      (await api(gw.url, 'GET', '/events?limit=100')).body.events.filter(
        (e: { kind: string }) => e.kind === 'created',
      ),
    ).toHaveLength(3);
  });

  it('answers a retried comment with the first answer and adds one comment', async () => {
    const gw = await startGateway({ workers: { maxConcurrent: 0 } });
    const { id } = (await api(gw.url, 'POST', '/tasks', { title: 'discussed' })).body;
    const path = `/tasks/${id}/comments`;
    const first = await api(gw.url, 'POST', path, { text: 'looks good' }, keyed('c-1'));
    const again = await api(gw.url, 'POST', path, { text: 'looks good' }, keyed('c-1'));
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const commented = (await api(gw.url, 'GET', `/tasks/${id}/events`)).body.events.filter(
      (e: { kind: string }) => e.kind === 'commented',
    );
    expect(commented).toHaveLength(1);
  });

  it('makes one task of 20 twins sent at once, each answered with it', async () => {
    const gw = await startGateway({ workers: { maxConcurrent: 0 } });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        api(gw.url, 'POST', '/tasks', { title: 'twin' }, keyed('twins')),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(201));
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
    expect((await gw.kanban.board.counts()).ready).toBe(1);
  });

  it('refuses a key sent again with another body or to another route (422), and a malformed key (400), changing nothing', async () => {
    const gw = await startGateway({ workers: { maxConcurrent: 0 } });
    const { id } = (await api(gw.url, 'POST', '/tasks', { title: 'a' }, keyed('k'))).body;
    const other = await api(gw.url, 'POST', '/tasks', { title: 'b' }, keyed('k'));
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(other.body.error.message).toContain('another body');
    const elsewhere = await api(gw.url, 'POST', `/tasks/${id}/comments`, { text: 'x' }, keyed('k'));
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body.error.message).toContain('first sent to POST /tasks');
    for (const bad of ['', 'x'.repeat(256), 'two words', 'caf\u00e9']) {
      const res = await api(gw.url, 'POST', '/tasks', { title: 'c' }, keyed(bad)).catch(
        (err: Error) => ({ status: 0, body: { error: { code: err.message } } }),
      );
      expect(res.status, JSON.stringify(bad)).toBe(400);
    }
    expect((await gw.kanban.board.counts()).ready).toBe(1);
    expect((await api(gw.url, 'GET', `/tasks/${id}/events`)).body.events).toHaveLength(1);
  });

  it('tells a twin it is still being handled (409) when the first is held past the wait', async () => {
    const gw = await startGateway({ workers: { maxConcurrent: 0 } }, { keyedWaitMs: 0 });
    const release = await holdBoard(gw.dataDir, 'idempotency_keys');
    try {
      const first = api(gw.url, 'POST', '/tasks', { title: 'held' }, keyed('held'));
      await waitFor('the first being handled', () => gw.kanban.board.handlingKey('held'));
      const twin = await api(gw.url, 'POST', '/tasks', { title: 'held' }, keyed('held'));
      expect(twin.status).toBe(409);
      expect(twin.body.error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
      // The first, held by the lock, is refused (as busy on SQLite; on PostgreSQL the lock is
      // taken for a twin's), and makes nothing either.
      expect([409, 503]).toContain((await first).status);
    } finally {
      await release();
    }
    expect((await gw.kanban.board.counts()).ready).toBe(0);
    // Once the lock is gone the key is free: nothing was recorded for it.
    expect((await api(gw.url, 'POST', '/tasks', { title: 'held' }, keyed('held'))).status).toBe(
      201,
    );
  });

  it('keeps a key across a restart, and forgets it after api.idempotencyHours (swept with retention)', async () => {
    let now = Date.now();
    const dataDir = tempDir();
    const config = { workers: { maxConcurrent: 0 }, api: { idempotencyHours: 1 } };
    const first = await startGateway(config, { dataDir, clock: wallClock(() => now) });
    const made = await api(first.url, 'POST', '/tasks', { title: 'nightly' }, keyed('nightly'));
    await first.close();
    const again = await startGateway(config, { dataDir, clock: wallClock(() => now) });
    const replay = await api(again.url, 'POST', '/tasks', { title: 'nightly' }, keyed('nightly'));
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.id).toBe(made.body.id);
    // An hour and a minute later the key is a new one: tomorrow's nightly run is created.
    now += 61 * 60_000;
    const next = await api(again.url, 'POST', '/tasks', { title: 'nightly' }, keyed('nightly'));
    expect(next.status).toBe(201);
    expect(next.headers.get('idempotent-replayed')).toBeNull();
    expect(next.body.id).not.toBe(made.body.id);
    now += 61 * 60_000;
    expect((await again.retention.pass()).idempotency_keys).toBe(1);
  });
});
