// The prompt an agent is given, built from the task (docs/agents.md): never from a shell variable, any
// size the API accepts (it goes on the agent's stdin, not its argv).

export interface PromptInput {
  taskId: string;
  title: string;
  body: string;
  /** The comments written since its last run started (all of them on its first run). */
  comments: { author: string; text: string; at: number }[];
  /** A follow-up's or a change request's text for this run, or null. */
  instructions: string | null;
  /** Where the agent works. */
  workspace:
    | { kind: 'worktree'; path: string; branch: string; base: string }
    | { kind: 'scratch'; path: string }
    | { kind: 'none'; path: string };
}

function commentsPart(comments: PromptInput['comments']): string {
  if (comments.length === 0) return '';
  const lines = comments.map((c) => `- ${c.author} (${new Date(c.at).toISOString()}): ${c.text}`);
  return `\n\n## Comments\n\n${lines.join('\n')}`;
}

function workspacePart(w: PromptInput['workspace']): string {
  switch (w.kind) {
    case 'worktree':
      return `You work in a git worktree of your own at ${w.path}, on branch ${w.branch} (from ${w.base}). Commit your work on that branch.`;
    case 'scratch':
      return `You work in a scratch folder of your own at ${w.path}.`;
    case 'none':
      return `You work in ${w.path}.`;
  }
}

/** The whole task, for a fresh session. */
export function taskPrompt(p: PromptInput): string {
  const body = p.body.trim() === '' ? '' : `\n\n${p.body}`;
  const instructions =
    p.instructions === null ? '' : `\n\n## Instructions for this run\n\n${p.instructions}`;
  return (
    `# Task ${p.taskId}: ${p.title}${body}${commentsPart(p.comments)}${instructions}\n\n` +
    `## Where you work\n\n${workspacePart(p.workspace)}\n\n` +
    'When you are done, end with a short summary of what you did.\n'
  );
}

/** What a resumed session is told: it has the task already, so only what is new. */
export function resumePrompt(p: PromptInput): string {
  return `${p.instructions ?? 'Carry on with the task.'}${commentsPart(p.comments)}\n`;
}
