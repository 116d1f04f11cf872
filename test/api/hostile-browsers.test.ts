// A web page must not be able to drive the API (docs/api.md "Browsers"): Host allow-list (421),
// Origin check on state-changing requests and websocket upgrades (403), JSON only (415).
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { boardSnapshot, rawRequest, startGateway, type TestGateway } from '../helpers/app.js';

const raw = (
  gw: TestGateway,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
) => rawRequest(gw.url, method, path, headers, body);

/** The HTTP status a websocket upgrade from a page at `origin` gets (101 when it opens). */
function upgradeStatus(url: string, origin: string): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { origin });
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
  });
}

const own = (gw: TestGateway) => new URL(gw.url).host;

describe('browsers', () => {
  it('refuses a page on another origin that posts text/plain to /admin/stop, /admin/restart or pause', async () => {
    const gw = await startGateway({
      platforms: [
        {
          name: 'ops',
          type: 'webhook',
          options: {
            url: 'http://127.0.0.1:9/x',
            secret: 'whsec_c3Nzc3Nzc3Nzc3Nzc3Nzc3Nzc3Nzc3Nz',
          },
        },
      ],
    });
    for (const path of ['/admin/stop', '/admin/restart', '/platform/ops/pause']) {
      const res = await raw(
        gw,
        'POST',
        path,
        {
          host: own(gw),
          origin: 'http://evil.example',
          'content-type': 'text/plain',
        },
        'x',
      );
      expect(res.status, path).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN_ORIGIN');
    }
    expect(gw.stops).toEqual([]);
    expect(gw.platforms.get('ops').view().state).not.toBe('paused');
  });

  it('refuses a text/plain or form body with 415 even without an Origin, changing nothing', async () => {
    const gw = await startGateway();
    const before = await boardSnapshot(gw);
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ]) {
      const res = await raw(
        gw,
        'POST',
        '/tasks',
        { host: own(gw), 'content-type': type },
        '{"title":"x"}',
      );
      expect(res.status, type).toBe(415);
      expect(res.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    }
    expect(await boardSnapshot(gw)).toEqual(before);
  });

  it('answers 421 to a Host that is not its own (DNS rebinding), and accepts the names it has', async () => {
    const gw = await startGateway({ server: { allowedHosts: ['Gate.Example.TS.net'] } });
    const { port } = new URL(gw.url);
    for (const host of [
      'evil.example',
      `evil.example:${port}`,
      '10.0.0.1',
      'localhost.evil.example',
      '',
    ]) {
      const res = await raw(gw, 'GET', '/tasks', { host });
      expect(res.status, host).toBe(421);
      expect(res.body.error.code).toBe('MISDIRECTED_REQUEST');
    }
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LOCALHOST:${port}`,
      `[::1]:${port}`,
      'gate.example.ts.net',
      'GATE.example.ts.net.:443',
    ]) {
      expect((await raw(gw, 'GET', '/tasks', { host })).status, host).toBe(200);
    }
  });

  it('lets its own page and an allowed proxy name create tasks; requests without an Origin are tools and pass', async () => {
    const gw = await startGateway({ server: { allowedHosts: ['gate.example.ts.net'] } });
    const json = { 'content-type': 'application/json' };
    const body = JSON.stringify({ title: 'from a page' });
    const ownPage = await raw(
      gw,
      'POST',
      '/tasks',
      { host: own(gw), origin: gw.url, ...json },
      body,
    );
    expect(ownPage.status).toBe(201);
    const proxied = await raw(
      gw,
      'POST',
      '/tasks',
      { host: own(gw), origin: 'https://gate.example.ts.net', ...json },
      body,
    );
    expect(proxied.status).toBe(201);
    // Another service on the allowed name, on another port, is another origin.
    const otherPort = await raw(
      gw,
      'POST',
      '/tasks',
      { host: own(gw), origin: 'https://gate.example.ts.net:9443', ...json },
      body,
    );
    expect(otherPort.status).toBe(403);
    const tool = await raw(gw, 'POST', '/tasks', { host: own(gw), ...json }, body);
    expect(tool.status).toBe(201);
    const nullOrigin = await raw(
      gw,
      'POST',
      '/tasks',
      { host: own(gw), origin: 'null', ...json },
      body,
    );
    expect(nullOrigin.status).toBe(403);
  });

  it('checks the websocket upgrade too, and takes ?token= only there', async () => {
    const token = 'a-token-of-sixteen-chars';
    const gw = await startGateway({ api: { token } });
    const wsUrl = `${gw.url.replace('http', 'ws')}/events/stream?token=${token}`;
    expect(await upgradeStatus(wsUrl, 'http://evil.example')).toBe(403);
    const accepted = await upgradeStatus(wsUrl, gw.url);
    expect(accepted).toBe(101);
    const query = await raw(gw, 'GET', `/tasks?token=${token}`, { host: own(gw) });
    expect(query.status).toBe(401);
    expect(query.body.error.message).toMatch(/websocket route only/);
  });
});
