import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { tempDir, writeConfig } from '../helpers/daemon.js';

function load(config: object, env: NodeJS.ProcessEnv = {}, flags: object = {}) {
  const dir = tempDir();
  return loadConfig({ config: writeConfig(dir, config), ...flags }, env, dir);
}

function keyOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.key;
    throw err;
  }
  throw new Error('no ConfigError');
}

describe('loadConfig', () => {
  it('applies defaults, then the file, then the environment, then flags', () => {
    const c = load(
      { server: { port: 1111 }, workers: { tickSeconds: 0.2 } },
      { GATEHOUSE_PORT: '2222', GATEHOUSE_HOST: '127.0.0.2' },
      { port: 3333 },
    );
    expect(c.server).toEqual({
      host: '127.0.0.2',
      port: 3333,
      bodyLimitBytes: 1_048_576,
      requestTimeoutSeconds: 30,
      maxConnections: 1024,
      allowedHosts: [],
    });
    expect(c.workers.tickSeconds).toBe(0.2);
    expect(c.workers.failureLimit).toBe(2);
    expect(Object.isFrozen(c.workers.profiles)).toBe(true);
  });

  it('names the key of every wrong type, unknown key and bad value', () => {
    expect(keyOf(() => load({ workers: { tickSeconds: 'fast' } }))).toBe('workers.tickSeconds');
    expect(keyOf(() => load({ sever: {} }))).toBe('sever');
    expect(keyOf(() => load({ workers: { profiles: { x: { command: [] } } } }))).toBe(
      'workers.profiles.x.command',
    );
    expect(keyOf(() => load({ workers: { maxConcurrent: -1 } }))).toBe('workers.maxConcurrent');
    expect(keyOf(() => load({ workers: { defaultProfile: 'ghost' } }))).toBe(
      'workers.defaultProfile',
    );
    expect(keyOf(() => load({ server: { host: '0.0.0.0' } }))).toBe('api.token');
    expect(keyOf(() => load({}, { GATEHOUSE_PORT: '80a' }))).toBe('GATEHOUSE_PORT');
    expect(
      keyOf(() =>
        load({
          platforms: [
            {
              name: 'ops',
              type: 'webhook',
              options: { url: 'ftp://x', secret: 'whsec_c3Nzc3Nzc3Nzc3Nzc3Nzc3Nzc3Nzc3Nz' },
            },
          ],
        }),
      ),
    ).toBe('platforms.0.options.url');
    // A Standard Webhooks secret: whsec_ and the base64 of enough key bytes, nothing else.
    for (const secret of ['a-plain-shared-secret-of-length', 'whsec_c2hvcnQ=', 'whsec_not base64!'])
      expect(
        keyOf(() =>
          load({
            platforms: [{ name: 'ops', type: 'webhook', options: { url: 'http://x/', secret } }],
          }),
        ),
      ).toBe('platforms.0.options.secret');
    expect(
      keyOf(() => load({ platforms: [{ name: 'ops', type: 'carrier-pigeon', options: {} }] })),
    ).toBe('platforms.0.type');
  });

  it("takes the cluster key of the specification: this host's name, and leases a renewal can keep", () => {
    expect(load({}).cluster).toEqual({
      hostName: hostname(),
      leaseSeconds: 30,
      renewSeconds: 5,
      reclaimGraceSeconds: 20,
    });
    expect(load({ cluster: { hostName: 'build-7' } }).cluster.hostName).toBe('build-7');
    expect(keyOf(() => load({ cluster: { hostName: 'two words' } }))).toBe('cluster.hostName');
    expect(keyOf(() => load({ cluster: { leaseSeconds: 0 } }))).toBe('cluster.leaseSeconds');
    expect(keyOf(() => load({ cluster: { hosts: 3 } }))).toBe('cluster.hosts');
  });

  it('checks the cluster timings only on a shared board, and there derives a lease that fits the kill grace', () => {
    const shared = { store: { kind: 'postgres', url: 'postgres://db/board' } };
    // One host on SQLite has no lease to break: an agent may have a long grace to save its work.
    const alone = load({ workers: { killGraceSeconds: 60 }, cluster: { renewSeconds: 20 } });
    expect(alone.workers.killGraceSeconds).toBe(60);
    expect(alone.cluster.leaseSeconds).toBe(30);
    // Shared, with the lease left unset: derived to fit three renewals, the grace and 2 s.
    expect(load({ ...shared, workers: { killGraceSeconds: 60 } }).cluster.leaseSeconds).toBe(77);
    expect(load(shared).cluster.leaseSeconds).toBe(30);
    // Set by the operator: it must fit, or it is refused naming what it needs.
    expect(load({ ...shared, cluster: { renewSeconds: 20 } }).cluster.leaseSeconds).toBe(67);
    const slow = { ...shared, cluster: { leaseSeconds: 30, renewSeconds: 20 } };
    expect(keyOf(() => load(slow))).toBe('cluster.renewSeconds');
    expect(() => load(slow)).toThrow('must be at most half of cluster.leaseSeconds (30)');
    expect(() => load({ ...shared, cluster: { leaseSeconds: 12, renewSeconds: 2 } })).toThrow(
      'must be at least 3 × cluster.renewSeconds + workers.killGraceSeconds + 2 (13) on a shared board',
    );
    expect(
      load({ ...shared, cluster: { leaseSeconds: 13, renewSeconds: 2 } }).cluster.leaseSeconds,
    ).toBe(13);
    // From the environment too: GATEHOUSE_DATABASE_URL makes the board shared.
    expect(
      load({ workers: { killGraceSeconds: 40 } }, { GATEHOUSE_DATABASE_URL: 'postgres://db/b' })
        .cluster.leaseSeconds,
    ).toBe(57);
  });

  it('refuses a file that is not JSON or not an object, naming the file', () => {
    const dir = tempDir();
    const path = join(dir, 'bad.json');
    writeFileSync(path, '{"server": ');
    expect(() => loadConfig({ config: path }, {}, dir)).toThrow(`${path}: not valid JSON`);
    writeFileSync(path, '[1,2]');
    expect(() => loadConfig({ config: path }, {}, dir)).toThrow('must hold one JSON object');
  });

  it('resolves relative program paths and existing relative files against the profile cwd, and nothing else', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'tools'));
    writeFileSync(join(dir, 'tools', 'job.mjs'), '');
    const c = loadConfig(
      {
        config: writeConfig(dir, {
          workers: {
            profiles: {
              p: { command: ['node', 'tools/job.mjs', '-e', "a('/x')", 'https://h/p'] },
              q: { command: ['./bin/agent'] },
            },
          },
        }),
      },
      {},
      dir,
    );
    expect(c.workers.profiles.p!.command).toEqual([
      'node',
      join(dir, 'tools/job.mjs'),
      '-e',
      "a('/x')",
      'https://h/p',
    ]);
    expect(c.workers.profiles.q!.command).toEqual([join(dir, 'bin/agent')]);
  });

  it('keeps GATEHOUSE_* variables (the API token among them) out of the workers environment', () => {
    const c = load(
      {},
      { PATH: '/bin', GATEHOUSE_TOKEN: 'a-secret-api-token-value', GATEHOUSE_DATA_DIR: '/d' },
    );
    expect(c.workerEnv).toEqual({ PATH: '/bin' });
  });
});
