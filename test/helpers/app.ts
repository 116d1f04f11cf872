// A real gateway in the test process: temp data dir, real SQLite file, real HTTP on 127.0.0.1:0.
import { request, type IncomingHttpHeaders } from 'node:http';
import { pino } from 'pino';
import { afterEach } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { composeGateway, type Gateway, type GatewayDeps } from '../../src/gateway/compose.js';
import { cleanEnv, tempDir, writeConfig } from './daemon.js';
import { openTestStore } from './store.js';
import { TEST_MARK } from './procs.js';

export interface TestGateway extends Gateway {
  url: string;
  config: Config;
  dataDir: string;
  stops: { code: number; reason: string }[];
  close: () => Promise<void>;
}

const open: TestGateway[] = [];

afterEach(async () => {
  for (const gw of open.splice(0)) await gw.close();
});

/** `dispatch: true` starts the dispatcher once the server listens (API tests claim by hand). */
export async function startGateway(
  configJson: object = {},
  extra: Partial<
    Pick<
      GatewayDeps,
      'terminator' | 'stream' | 'clock' | 'adapters' | 'notifyRetryMs' | 'keyedWaitMs'
    >
  > & {
    dispatch?: boolean;
    /** Reuse a data dir (a restart); a fresh one by default. */
    dataDir?: string;
    /** Where the gateway logs (silent by default). */
    logger?: GatewayDeps['logger'];
    /** More of the daemon's environment (a forge's token variable). */
    env?: Record<string, string>;
  } = {},
): Promise<TestGateway> {
  const dataDir = extra.dataDir ?? tempDir();
  const configPath = writeConfig(dataDir, { dataDir, ...configJson });
  const env = {
    ...cleanEnv(),
    ...extra.env,
    [TEST_MARK.split('=')[0]!]: TEST_MARK.split('=')[1]!,
  };
  const config = loadConfig({ config: configPath }, env, dataDir);
  const store = await openTestStore(dataDir);
  const stops: { code: number; reason: string }[] = [];
  const gateway = await composeGateway({
    config,
    store,
    logger: extra.logger ?? pino({ level: 'silent' }),
    requestStop: (code, reason) => stops.push({ code, reason }),
    ...(extra.terminator ? { terminator: extra.terminator } : {}),
    ...(extra.stream ? { stream: extra.stream } : {}),
    ...(extra.clock ? { clock: extra.clock } : {}),
    ...(extra.adapters ? { adapters: extra.adapters } : {}),
    notifyRetryMs: extra.notifyRetryMs ?? 200,
    ...(extra.keyedWaitMs !== undefined ? { keyedWaitMs: extra.keyedWaitMs } : {}),
  });
  await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  const address = gateway.app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  if (extra.dispatch) await gateway.dispatcher.start(`http://127.0.0.1:${port}`);
  else if (store.shared && config.platforms.length > 0) {
    // A shared board's platforms are served by the host that holds them: this one, once joined.
    await gateway.dispatcher.host.start();
    gateway.dispatcher.host.keepRenewing();
  }
  store.serving();
  if (extra.dispatch) await gateway.pulls.start();
  await gateway.platforms.start();
  let closed = false;
  const gw: TestGateway = {
    ...gateway,
    url: `http://127.0.0.1:${port}`,
    config,
    dataDir,
    stops,
    close: async () => {
      if (closed) return;
      closed = true;
      for (const step of gateway.closeSteps) await step.run();
    },
  };
  open.push(gw);
  return gw;
}

export interface JsonResponse {
  status: number;
  body: any;
  headers: Headers;
}

/** One request with a JSON body (or raw text), answered as parsed JSON when possible. */
export async function api(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${url}${path}`, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    // plain text (a log)
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** Everything a refused request could have changed: the last event id, counts and tasks. */
export async function boardSnapshot(gw: TestGateway) {
  const board = gw.kanban.board;
  return {
    lastEvent: await board.events.lastId(),
    counts: await board.counts(),
    tasks: (await board.list({ limit: 1000 })).tasks,
  };
}

/**
 * One request sent exactly as given: the path as-is (no ../ folding) and only these headers
 * (fetch would set Host and Origin its own way). A JSON answer is parsed.
 */
export function rawRequest(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: any }> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method, path, headers, setHost: false },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
