// Once per `npm test`: the pinned agent CLIs (scripts/agent-clis.json) installed into their cache
// by the repository's own script, their programs handed to the agent tests in the environment.
// @ts-expect-error: a plain ES module of the repository's scripts, without types.
import { installAgent } from '../scripts/install-agents.mjs';

export default function setup(): void {
  process.env.GH_CLAUDE_BIN = (installAgent as (k: string) => string)('claude');
  process.env.GH_CODEX_BIN = (installAgent as (k: string) => string)('codex');
}
