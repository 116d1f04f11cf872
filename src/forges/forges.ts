// The forge of a repository's `pr`: one adapter per provider, behind one interface.
import type { PullRequestConfig } from '../config/schema.js';
import { Gitea } from './gitea.js';
import { GitHub } from './github.js';
import { GitLab } from './gitlab.js';
import type { RequestOutcome } from './http.js';
import type { Forge } from './types.js';

const KINDS = { github: GitHub, gitlab: GitLab, gitea: Gitea } as const;

export function openForge(
  config: PullRequestConfig,
  onRequest: (outcome: RequestOutcome) => void,
): Forge {
  return new KINDS[config.provider](config, onRequest);
}
