// Which model a task may ask its agent profile for (SPEC 11): the profile's `model` or one of its
// `models`, and only for an agent profile.
import type { Profile } from './schema.js';

/** Why a task may not ask for `model` with this assignee, or null. */
export function modelProblem(
  config: { workers: { defaultProfile: string; profiles: Record<string, Profile> } },
  model: string,
  assignee: string | null,
): string | null {
  const name = assignee ?? config.workers.defaultProfile;
  const profile = config.workers.profiles[name];
  // An assignee this host does not run is checked by the host that does.
  if (!profile) return null;
  if (!profile.agent) return `profile "${name}" runs a command, not an agent: it takes no model`;
  const allowed = [
    ...new Set([...(profile.agent.model ? [profile.agent.model] : []), ...profile.agent.models]),
  ];
  if (!allowed.includes(model))
    return `profile "${name}" allows ${allowed.length ? allowed.map((m) => `"${m}"`).join(', ') : 'no model but its own'} (agent.model, agent.models), not "${model}"`;
  return null;
}
