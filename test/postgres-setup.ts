// Once per run: a throwaway PostgreSQL cluster for the tests that need one (scripts/pg-cluster.mjs),
// unless GATEHOUSE_TEST_DATABASE_URL names a server to use instead. A test that needs PostgreSQL
// and cannot have it fails: it is never skipped.
import { startCluster } from '../scripts/pg-cluster.mjs';

const URL_VAR = 'GATEHOUSE_TEST_DATABASE_URL';
/** Set for the test workers when this setup could not start a cluster: the reason. */
const MISSING_VAR = 'GH_TEST_POSTGRES_MISSING';

/** The environment without the suite's process mark: the cluster is not a process a test left. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GH_TEST')));
}

export default async function setup(): Promise<(() => void) | undefined> {
  if (process.env[URL_VAR]) return undefined;
  const cluster = await startCluster({ env: cleanEnv() });
  if (cluster.missing !== undefined) {
    process.env[MISSING_VAR] = cluster.missing;
    return undefined;
  }
  process.env[URL_VAR] = cluster.url;
  return () => cluster.stop();
}
