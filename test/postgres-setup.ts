// Once per run: a throwaway PostgreSQL cluster for the tests that need one, from Debian's
// postgresql package (initdb and pg_ctl from /usr/lib/postgresql/<version>/bin), in a temp dir,
// on a free port, as the unprivileged postgres user when run as root (initdb refuses root).
// GATEHOUSE_TEST_DATABASE_URL, when set, names a server to use instead. A test that needs
// PostgreSQL and cannot have it fails: it is never skipped.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const URL_VAR = 'GATEHOUSE_TEST_DATABASE_URL';
/** Set for the test workers when this setup could not start a cluster: the reason. */
const MISSING_VAR = 'GH_TEST_POSTGRES_MISSING';

function binDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, 'bin/initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : null;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || address === null) throw new Error('no free port');
  return address.port;
}

export default async function setup(): Promise<(() => void) | undefined> {
  if (process.env[URL_VAR]) return undefined;
  const bin = binDir();
  if (!bin) {
    process.env[MISSING_VAR] =
      'PostgreSQL is not installed: apt-get install postgresql (.ci/run installs it)';
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-pg-'));
  const data = join(dir, 'data');
  const root = process.getuid?.() === 0;
  // initdb refuses root: the cluster belongs to the postgres user, in a folder it owns.
  const as = (argv: string[]) => (root ? ['runuser', '-u', 'postgres', '--', ...argv] : argv);
  if (root) {
    const { uid, gid } = postgresIds();
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  const port = await freePort();
  const run = (argv: string[]) => {
    const [cmd, ...args] = as(argv);
    execFileSync(cmd!, args, { stdio: ['ignore', 'ignore', 'pipe'], env: cleanEnv() });
  };
  // Throwaway: no fsync, and only the loopback TCP port (the socket goes in the temp dir).
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
  run([
    join(bin, 'pg_ctl'),
    '-D',
    data,
    '-w',
    '-l',
    join(dir, 'log'),
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
    'start',
  ]);
  process.env[URL_VAR] = `postgres://gatehouse@127.0.0.1:${port}/postgres`;
  return () => {
    try {
      run([join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

function postgresIds(): { uid: number; gid: number } {
  const line = execFileSync('getent', ['passwd', 'postgres'], { encoding: 'utf8' });
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** The environment without the suite's process mark: the cluster is not a process a test left. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GH_TEST')));
}
