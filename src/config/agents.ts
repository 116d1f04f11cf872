// Which model a task may ask its agent profile for (docs/agents.md): the profile's `model` or one of its
// `models`, and only for an agent profile.
import type { AgentConfig, Profile } from './schema.js';

/** The models an agent profile runs a task with: its own `model` and its `models`. */
export function allowedModels(agent: AgentConfig): string[] {
  return [...new Set([...(agent.model ? [agent.model] : []), ...agent.models])];
}

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
  const allowed = allowedModels(profile.agent);
  if (!allowed.includes(model))
    return `profile "${name}" allows ${allowed.length ? allowed.map((m) => `"${m}"`).join(', ') : 'no model but its own'} (agent.model, agent.models), not "${model}"`;
  return null;
}
