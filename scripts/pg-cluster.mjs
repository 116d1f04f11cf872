// A throwaway PostgreSQL cluster, for the test suite and the benchmarks: Debian's postgresql
// package (initdb and pg_ctl from /usr/lib/postgresql/<version>/bin), in a temp dir, on a free
// loopback port, as the unprivileged postgres user when run as root (initdb refuses root).
import { execFile, execFileSync } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  rmSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function binDir() {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, 'bin/initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : null;
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || address === null) throw new Error('no free port');
  return address.port;
}

function postgresIds() {
  const line = execFileSync('getent', ['passwd', 'postgres'], { encoding: 'utf8' });
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * Starts a cluster; `{url, stop}`, or `{missing}` saying why there is none. `env`: the
 * environment its processes get. `durable`: fsync on, as a real server (the benchmarks); off for
 * the tests. `network`: a CIDR whose clients may connect too (listening on every address), for
 * hosts in network namespaces; by default only loopback.
 */
export async function startCluster({ env = process.env, durable = false, network = null } = {}) {
  const bin = binDir();
  if (!bin)
    return {
      missing: 'PostgreSQL is not installed: apt-get install postgresql (.ci/run installs it)',
    };
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-pg-'));
  const data = join(dir, 'data');
  const root = process.getuid?.() === 0;
  const as = (argv) => (root ? ['runuser', '-u', 'postgres', '--', ...argv] : argv);
  if (root) {
    const { uid, gid } = postgresIds();
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  const port = await freePort();
  const run = (argv) => {
    const [cmd, ...args] = as(argv);
    execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
  };
  run([
    join(bin, 'initdb'),
    '-D',
    data,
    '-A',
    'trust',
    '-U',
    'gatehouse',
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  if (network) appendFileSync(join(data, 'pg_hba.conf'), `host all all ${network} trust\n`);
  // The loopback TCP port (or every address, for `network`); the socket goes in the temp dir.
  const listen = network ? '*' : '127.0.0.1';
  const options = `-p ${port} -k ${dir} -c listen_addresses=${listen} -c max_connections=200${durable ? '' : ' -c fsync=off'}`;
  run([join(bin, 'pg_ctl'), '-D', data, '-w', '-l', join(dir, 'log'), '-o', options, 'start']);
  return {
    url: `postgres://gatehouse@127.0.0.1:${port}/postgres`,
    /** Restarts the server as an operator would (`pg_ctl restart -m fast`), without blocking. */
    async restart() {
      const [cmd, ...args] = as([
        join(bin, 'pg_ctl'),
        '-D',
        data,
        '-m',
        'fast',
        '-w',
        '-l',
        join(dir, 'log'),
        '-o',
        options,
        'restart',
      ]);
      await new Promise((resolve, reject) =>
        execFile(cmd, args, { env }, (err) => (err ? reject(err) : resolve(undefined))),
      );
    },
    stop() {
      try {
        run([join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
