// Who a task's first run waits for, and who may say yes (docs/mcp.md): the task's own
// `approval`, else its profile's, and the profile's approvers and notSelf.
import type { Config } from '../config/schema.js';
import type { Origin, Task } from './model/types.js';

/** Who asked: `api` (the API token's holder, the CLI), or `<platform>:<user id>` from a chat. */
export type Approver = string;

/** Who made a task, in the words of approvers. */
export function creatorOf(origin: Origin): string {
  switch (origin.kind) {
    case 'api':
    case 'cli':
      return 'api';
    case 'platform':
      return `${origin.platform}:${origin.user ?? '?'}`;
    case 'mcp':
      return `mcp:${origin.runId}`;
    case 'schedule':
      return `schedule:${origin.name}`;
  }
}

export class ApprovalRules {
  constructor(private readonly config: Pick<Config, 'workers'>) {}

  private profileOf(assignee: string | null) {
    return this.config.workers.profiles[assignee ?? this.config.workers.defaultProfile] ?? null;
  }

  /** Whether a new task's first run waits for a person. */
  needed(assignee: string | null, asked: 'before_run' | null | undefined): boolean {
    return asked === 'before_run' || (this.profileOf(assignee)?.approval.beforeRun ?? false);
  }

  /** The task's profile names its approvers (else the API, or the chat that made it, may). */
  named(task: Task): boolean {
    return (this.profileOf(task.assignee)?.approval.approvers ?? null) !== null;
  }

  /** Why `who` may not approve `task`'s first run, or null: they may. */
  refusal(task: Task, who: Approver): string | null {
    const rule = this.profileOf(task.assignee)?.approval;
    if (rule?.approvers && !rule.approvers.includes(who))
      return `${who} is not among the approvers of profile ${task.assignee ?? this.config.workers.defaultProfile}`;
    if (rule?.notSelf && creatorOf(task.origin) === who)
      return `${who} created task ${task.id}: someone else approves it (notSelf)`;
    return null;
  }
}
