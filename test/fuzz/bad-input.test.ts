import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { parsePidRecord } from '../../src/gateway/pid-file.js';
import {
  readExitRecord,
  readProcRecord,
  readVerdict,
} from '../../src/kanban/dispatch/run-files.js';
import { WRAPPER } from '../../src/kanban/dispatch/worker-spawn.js';
import { bootNowMs } from '../../src/proc/index.js';
import { api, boardSnapshot, startGateway } from '../helpers/app.js';
import { claim } from '../helpers/board.js';
import { tempDir, writeConfig } from '../helpers/daemon.js';

/** Garbage of many shapes, for any JSON value position. */
const VALUES: unknown[] = [
  null,
  true,
  -1,
  0,
  1.5,
  1e308,
  -1e308,
  2 ** 63,
  '',
  ' ',
  'x'.repeat(10_000),
  '\u0000',
  '../../etc/passwd',
  [],
  [1, 2],
  {},
  { $gt: '' },
  { __proto__: { admin: true } },
  'NaN',
  '<script>',
];

describe('bad input at scale changes nothing', () => {
  it('answers every malformed request with a clear 4xx error body', async () => {
    const gw = await startGateway();
    const task = (await api(gw.url, 'POST', '/tasks', { title: 'the one task' })).body;
    const claimed = await claim(gw.kanban.board, gw.dataDir, task.id);
    const original = await boardSnapshot(gw);
    const requests: [string, string, unknown][] = [];
    const bodies = [
      ...VALUES.map((v) => ({ title: v })),
      ...VALUES.map((v) => ({ title: 'ok', priority: v })),
      ...VALUES.map((v) => ({ title: 'ok', parents: v })),
      ...VALUES.map((v) => ({ title: 'ok', maxRuntimeSeconds: v })),
      ...VALUES.map((v) => ({ title: 'ok', [String(v).slice(0, 20) || 'k']: 1 })),
      ...['{', '{"title":', '{"title":"x"', '[', 'null', '"x"', '1', '{"title":"x"}}', '\u0000'],
      // Depth, prototype keys, invisible titles, encodings, size.
      `{"title":"x","body":${'['.repeat(65)}${']'.repeat(65)}}`,
      `${'['.repeat(20_000)}${']'.repeat(20_000)}`,
      '{"title":"x","__proto__":{"admin":true}}',
      '{"title":"x","constructor":{"prototype":{"admin":true}}}',
      { title: '\u200b\u200c\u200d' },
      { title: '\ufeff' },
      { title: '\u00ad' },
      '{"title":"\ud800"}',
      `{"title":"${'x'.repeat(501)}"}`,
      `{"title":"x","body":"${'y'.repeat(1_100_000)}"}`,
    ];
    for (const body of bodies) requests.push(['POST', '/tasks', body]);
    for (const body of VALUES.map((v) => ({ title: v, bogus: 1 })))
      requests.push(['PATCH', `/tasks/${task.id}`, body]);
    for (const id of [
      't_x',
      '..',
      '%2e%2e%2f',
      'T_000000000000',
      `${task.id}x`,
      '-1',
      '9'.repeat(40),
    ]) {
      requests.push(
        ['GET', `/tasks/${id}`, undefined],
        ['POST', `/tasks/${id}/archive`, undefined],
        ['DELETE', `/tasks/${id}`, undefined],
      );
      requests.push(['GET', `/runs/${id}/log`, undefined]);
    }
    for (const q of [
      'limit=-1',
      'limit=1e9',
      'limit=abc',
      'status=%00',
      'cursor=' + 'A'.repeat(200),
      'after=-5',
      'x=1',
    ]) {
      requests.push(['GET', `/tasks?${q}`, undefined], ['GET', `/events?${q}`, undefined]);
    }
    // Worker routes get bodies that are always wrong (an unknown field), so the run stays open.
    for (const body of VALUES.map((v) => ({ summary: v, verdict: 'done' })))
      requests.push(['POST', `/tasks/${task.id}/complete`, body]);
    for (const body of VALUES.map((v) => ({ reason: v, verdict: 'blocked' })))
      requests.push(['POST', `/tasks/${task.id}/block`, body]);

    let checked = 0;
    for (const [method, path, body] of requests) {
      const res = await api(gw.url, method, path, body, {
        authorization: `Bearer ${claimed.token}`,
      });
      // A few bodies are valid by accident (e.g. a priority of 0): those may succeed, and are undone below.
      if (res.status < 400) continue;
      expect(res.status, `${method} ${path} ${JSON.stringify(body)?.slice(0, 80)}`).toBeLessThan(
        500,
      );
      expect(typeof res.body.error.code).toBe('string');
      expect(res.body.error.message.length).toBeGreaterThan(3);
      checked++;
    }
    expect(checked).toBeGreaterThan(150);
    // Whatever was valid by accident created tasks or edits; everything refused changed nothing.
    const after = await boardSnapshot(gw);
    expect(after.tasks.find((t) => t.id === task.id)).toMatchObject({
      title: 'the one task',
      status: 'running',
    });
    expect(after.tasks.length - original.tasks.length).toBe(
      after.counts.ready - original.counts.ready,
    );
  });

  it('names the key of every bad config file', () => {
    const dir = tempDir();
    const corpus: [string, string][] = [
      ['{"server": {"port": "8787"}}', 'server.port'],
      ['{"server": {"port": 70000}}', 'server.port'],
      ['{"server": {"port": -1}}', 'server.port'],
      ['{"server": {"port": 1e400}}', 'server.port'],
      ['{"workers": {"tickSeconds": -1}}', 'workers.tickSeconds'],
      ['{"workers": {"maxConcurrent": 1.5}}', 'workers.maxConcurrent'],
      ['{"workers": {"profiles": {"a": {"command": "node x.js"}}}}', 'workers.profiles.a.command'],
      [
        '{"workers": {"profiles": {"a": {"command": ["x"], "env": {"1BAD": "x"}}}}}',
        'workers.profiles.a.env',
      ],
      ['{"workers": {"profiles": {"../x": {"command": ["x"]}}}}', 'workers.profiles'],
      ['{"api": {"token": "short"}}', 'api.token'],
      ['{"crashLoop": {"maxStarts": 0}}', 'crashLoop.maxStarts'],
      ['{"platforms": {}}', 'platforms'],
      ['{"platforms": [{"name": "A B", "type": "webhook", "options": {}}]}', 'platforms.0.name'],
      [
        '{"platforms": [{"name": "t", "type": "telegram", "options": {"token": ""}}]}',
        'platforms.0.options.token',
      ],
      [
        '{"platforms": [{"name": "t", "type": "telegram", "options": {"token": "x", "pollTimeoutSeconds": 9999}}]}',
        'platforms.0.options.pollTimeoutSeconds',
      ],
      [
        '{"platforms": [{"name": "m", "type": "matrix", "options": {"homeserver": "https://m.example", "userId": "@b:m.example"}}]}',
        'platforms.0.options.accessToken',
      ],
      [
        '{"platforms": [{"name": "m", "type": "matrix", "options": {"homeserver": "m.example", "accessToken": "t", "userId": "@b:m.example"}}]}',
        'platforms.0.options.homeserver',
      ],
      [
        '{"platforms": [{"name": "m", "type": "matrix", "options": {"homeserver": "https://m.example", "accessToken": "t", "userId": "bot"}}]}',
        'platforms.0.options.userId',
      ],
      [
        '{"platforms": [{"name": "s", "type": "slack", "options": {"appToken": "xapp-1"}}]}',
        'platforms.0.options.botToken',
      ],
      [
        '{"platforms": [{"name": "s", "type": "slack", "options": {"botToken": "xoxb-1", "appToken": "xoxb-2"}}]}',
        'platforms.0.options.appToken',
      ],
      [
        '{"platforms": [{"name": "d", "type": "discord", "options": {}}]}',
        'platforms.0.options.botToken',
      ],
      [
        '{"platforms": [{"name": "d", "type": "discord", "options": {"botToken": "t", "gatewayUrl": "http://x"}}]}',
        'platforms.0.options.gatewayUrl',
      ],
      ['{"log": {"level": "loud"}}', 'log.level'],
      ['{"dataDir": 5}', 'dataDir'],
      ['{"dataDir": ""}', 'dataDir'],
      ['{"workers": {"tickSeconds": 3000000}}', 'workers.tickSeconds'],
      ['{"workers": {"tickSeconds": 61}}', 'workers.tickSeconds'],
      ['{"workers": {"killGraceSeconds": 1e12}}', 'workers.killGraceSeconds'],
      ['{"workers": {"reclaimDeferSeconds": 2073601}}', 'workers.reclaimDeferSeconds'],
      ['{"replace": {"timeoutSeconds": 1e99}}', 'replace.timeoutSeconds'],
      ['{"shutdown": {"timeoutSeconds": 3e6}}', 'shutdown.timeoutSeconds'],
      ['{"shutdown": {"workers": "kill"}}', 'shutdown.workers'],
      ['{"crashLoop": {"maxBackoffSeconds": 1e10}}', 'crashLoop.maxBackoffSeconds'],
      ['{"server": {"allowedHosts": "evil.example"}}', 'server.allowedHosts'],
      ['{"server": {"allowedHosts": ["a b"]}}', 'server.allowedHosts.0'],
      ['{"server": {"allowedHosts": ["http://x/"]}}', 'server.allowedHosts.0'],
      ['{"server": {"bodyLimitBytes": 1e12}}', 'server.bodyLimitBytes'],
      ['{"retention": {"runDays": 0}}', 'retention.runDays'],
      ['{"retention": {"eventDays": "forever"}}', 'retention.eventDays'],
      ['{"retention": {"runDays": 1, "x": 1}}', 'retention'],
      [
        '{"platforms": [{"name": "w", "type": "webhook", "options": {}, "breaker": {"resetTimeoutMs": 1e13}}]}',
        'platforms.0.breaker.resetTimeoutMs',
      ],
    ];
    for (const [text, key] of corpus) {
      const path = join(dir, 'c.json');
      writeFileSync(path, text);
      let error: unknown;
      try {
        loadConfig({ config: path }, {}, dir);
      } catch (err) {
        error = err;
      }
      expect(error, text).toBeInstanceOf(ConfigError);
      expect(
        (error as ConfigError).key.startsWith(key),
        `${text} → ${(error as ConfigError).key}`,
      ).toBe(true);
    }
    for (const text of ['', '{', '{"a":}', '\u0000', 'null', '[]', '"x"']) {
      writeFileSync(join(dir, 'c.json'), text);
      expect(() => loadConfig({ config: join(dir, 'c.json') }, {}, dir)).toThrow(ConfigError);
    }
  });

  it('treats every garbage pid file as stale', () => {
    const good = {
      pid: 10,
      startTime: 1,
      bootId: 'b',
      argv: ['gatehouse'],
      port: 1,
      dataDir: '/d',
      startedAt: 1,
      version: '1',
    };
    const corpus = [
      '',
      'hello',
      '-5',
      '{"pid":1}',
      '[]',
      'null',
      '{"pid":"10"}',
      JSON.stringify(good).slice(0, 30),
      ...Object.keys(good).flatMap((k) => VALUES.map((v) => JSON.stringify({ ...good, [k]: v }))),
    ];
    const accepted = corpus.filter((text) => parsePidRecord(text) !== null);
    // Only values that are of the right type by chance pass (e.g. a port of 0 or -1 is a number).
    for (const text of accepted) {
      const r = parsePidRecord(text)!;
      expect(Number.isInteger(r.pid) && r.pid > 0 && r.pid <= 4_194_304).toBe(true);
      expect(typeof r.bootId).toBe('string');
    }
    expect(parsePidRecord(JSON.stringify(good))).toEqual(good);
  });

  it('reads garbage run files as missing, never as a verdict or an identity', () => {
    const dir = join(tempDir(), 'r_000000000001');
    mkdirSync(dir);
    const garbage = [
      '',
      '{',
      'null',
      '[]',
      '{"pid":-1}',
      '{"pid":1.5,"pgid":1,"startTime":1,"bootId":"b"}',
      '{"status":"done","summ',
      '{"status":999}',
      '{"status":-1}',
      '{"status":"0"}',
      '{"status":"blocked","reason":""}',
      '{"status":"DONE"}',
    ];
    for (const text of garbage) {
      for (const name of ['proc.json', 'exit.json', 'result.json'])
        writeFileSync(join(dir, name), text);
      expect(readProcRecord(dir), text).toBeNull();
      expect(readExitRecord(dir), text).toBeNull();
      expect(typeof readVerdict(dir), text).toBe('string');
    }
    // "Not started" is the wrapper's refusal, status 125 only: a worker cannot turn its own
    // exit into an uncounted one by writing it.
    writeFileSync(join(dir, 'exit.json'), '{"status":1,"started":false}');
    expect(readExitRecord(dir)).toEqual({ exitCode: 1, signal: null });
    writeFileSync(join(dir, 'exit.json'), '{"status":125,"started":false}');
    expect(readExitRecord(dir)).toEqual({ exitCode: 125, signal: null, notStarted: true });
  });

  it('has the run wrapper refuse a start deadline it cannot read, as one passed', () => {
    const dir = tempDir();
    const wrapped = (until: string) => {
      const started = join(dir, `started-${until.length}-${until.replace(/\W/g, '_')}`);
      const exit = `${started}.exit.json`;
      const run = spawnSync('/bin/sh', [WRAPPER, '--until', until, exit, '/bin/touch', started]);
      return { status: run.status, started: existsSync(started), exit: readFileSync(exit, 'utf8') };
    };
    const refused = { status: 125, started: false, exit: '{"status":125,"started":false}\n' };
    for (const until of ['', 'soon', '-1x', '1e99', ' 5', String(Math.floor(bootNowMs()) - 1000)])
      expect(wrapped(until), JSON.stringify(until)).toEqual(refused);
    expect(wrapped(String(Math.floor(bootNowMs()) + 60_000))).toEqual({
      status: 0,
      started: true,
      exit: '{"status":0}\n',
    });
  });
});

describe('a config file with hostile values, through the real gatehouse', () => {
  it('is refused before anything starts', async () => {
    const { startDaemon, pidRecord } = await import('../helpers/daemon.js');
    const dataDir = tempDir();
    const config = writeConfig(tempDir(), {
      workers: { profiles: { x: { command: ['a'], maxConcurrent: 1e400 } } },
    });
    const daemon = startDaemon({ dataDir, config });
    expect((await daemon.closed).code).toBe(78);
    expect(daemon.stderr()).toContain('workers.profiles.x.maxConcurrent');
    expect(pidRecord(dataDir)).toBeNull();
  });
});
