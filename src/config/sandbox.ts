// A profile's `sandbox`, resolved (docs/sandbox.md): bubblewrap by default for an agent, none
// for a command, and what cannot go together said by its key.
import type { RawConfig, SandboxConfig } from './schema.js';

type Fail = (key: string, message: string) => Error;
type RawProfile = RawConfig['workers']['profiles'][string];

export function resolveSandbox(raw: RawProfile, at: string, fail: Fail): SandboxConfig {
  const given = raw.sandbox;
  const kind = given?.kind ?? (raw.agent ? 'bwrap' : 'none');
  if (kind === 'bwrap' && raw.keepDescendants)
    throw fail(
      `${at}.keepDescendants`,
      'a sandboxed run is ended whole (its pid namespace goes with it): nothing of it can be kept',
    );
  if (kind === 'none' && given && Object.keys(given).some((k) => k !== 'kind'))
    throw fail(`${at}.sandbox`, 'only a sandbox of kind "bwrap" takes network, paths or limits');
  return {
    kind,
    network: given?.network ?? 'host',
    writable: given?.writable ?? [],
    readOnly: given?.readOnly ?? [],
    hidden: given?.hidden ?? [],
    limits: {
      memoryMax: given?.limits?.memoryMax ?? null,
      pidsMax: given?.limits?.pidsMax ?? null,
      cpuWeight: given?.limits?.cpuWeight ?? null,
    },
  };
}
