// A profile's `mcp` and `approval`, resolved (docs/mcp.md), and what cannot go together said by
// its key.
import {
  AGENT_TOOLS,
  type ApprovalConfig,
  type McpConfig,
  type RawConfig,
  type SandboxConfig,
} from './schema.js';

type Fail = (key: string, message: string) => Error;
type RawProfile = RawConfig['workers']['profiles'][string];

export function resolveMcp(
  raw: RawProfile,
  at: string,
  sandbox: SandboxConfig,
  fail: Fail,
): McpConfig | null {
  const given = raw.mcp;
  if (!given?.enabled) return null;
  if (sandbox.kind === 'bwrap' && sandbox.network === 'none')
    throw fail(
      `${at}.mcp`,
      'a run with network "none" cannot reach the MCP endpoint on the loopback: set sandbox.network "host", or turn mcp off',
    );
  return {
    tools: [...new Set(given.tools ?? AGENT_TOOLS)],
    assignees: [...new Set(given.assignees ?? [])],
    maxSubtasksPerRun: given.maxSubtasksPerRun ?? 20,
    maxCallsPerMinute: given.maxCallsPerMinute ?? 120,
  };
}

export function resolveApproval(raw: RawProfile): ApprovalConfig {
  return {
    beforeRun: raw.approval === 'before_run',
    approvers: raw.approvers ? [...new Set(raw.approvers)] : null,
    notSelf: raw.notSelf ?? false,
  };
}

/** Each profile's mcp.assignees names a profile. */
export function checkAssignees(
  profiles: Record<string, { mcp: McpConfig | null }>,
  fail: Fail,
): void {
  for (const [name, p] of Object.entries(profiles))
    for (const [i, a] of (p.mcp?.assignees ?? []).entries())
      if (!Object.hasOwn(profiles, a))
        throw fail(`workers.profiles.${name}.mcp.assignees.${i}`, `no profile named "${a}"`);
}
