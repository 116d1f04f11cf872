// Several real daemons sharing one PostgreSQL board, each as a host of its own (its own data
// dir and host name), on loopback.
import { startDaemon, tempDir, waitServing, writeConfig } from './daemon.js';
import { testSchema } from './postgres.js';
import type { Spawned } from './procs.js';

export interface TestHost {
  name: string;
  dataDir: string;
  config: string;
  base: string;
  daemon: Spawned;
}

/** Leases short enough that a lost host is taken over within seconds. */
export const SHORT_LEASES = { leaseSeconds: 10, renewSeconds: 1, reclaimGraceSeconds: 1 };

/**
 * Starts a daemon per name on a schema of their own; `configOf` gives each its config (store and
 * cluster are added). Resolves once every one serves.
 */
export async function startHosts(
  names: readonly string[],
  configOf: (name: string, index: number) => object,
): Promise<TestHost[]> {
  const { url, schema } = testSchema();
  const hosts: TestHost[] = names.map((name, i) => {
    const dataDir = tempDir();
    const config = writeConfig(dataDir, {
      ...configOf(name, i),
      store: { kind: 'postgres', url, schema, poolSize: 4 },
      cluster: { ...SHORT_LEASES, hostName: name },
    });
    return { name, dataDir, config, base: '', daemon: startDaemon({ dataDir, config }) };
  });
  for (const host of hosts)
    host.base = await waitServing(host.dataDir, host.daemon.pid, 30_000).catch(() => {
      throw new Error(`${host.name} did not serve: ${host.daemon.output()}`);
    });
  return hosts;
}

export async function stopHosts(hosts: readonly TestHost[]): Promise<void> {
  for (const { daemon } of hosts) if (daemon.child.exitCode === null) daemon.child.kill('SIGTERM');
  await Promise.all(hosts.map((h) => h.daemon.exited));
}
