// Every kind of agent gatehouse drives, by name; a new kind is one file and one line here.
import type { AgentConfig } from '../config/schema.js';
import { claude } from './claude.js';
import { codex } from './codex.js';
import type { AgentKind } from './types.js';

const KINDS: Record<AgentConfig['kind'], AgentKind> = { claude, codex };

export function agentKind(name: AgentConfig['kind']): AgentKind {
  return KINDS[name];
}
