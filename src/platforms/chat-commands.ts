// Chat commands: /task TITLE, /tasks, /status ID; anything else gets a short help.
import { AppError } from '../errors.js';
import type { Board } from '../kanban/board.js';
import type { Task } from '../kanban/types.js';

export const HELP =
  'Commands: /task TITLE (create a task), /tasks (open tasks), /status ID (one task)';

const OPEN = new Set(['todo', 'ready', 'running', 'blocked']);

function line(t: Task): string {
  return `${t.id} [${t.status}] ${t.title}`;
}

/** Handles one chat message; returns the reply, and the task to subscribe the chat to, if any. */
export function handleChatCommand(
  board: Board,
  platform: string,
  channel: string,
  text: string,
): { reply: string; subscribe: Task | null } {
  const match = /^\/(\w+)(?:@\S+)?(?:\s+([\s\S]*))?$/.exec(text.trim());
  const [, command, rest = ''] = match ?? [];
  const arg = rest.trim();
  switch (command) {
    case 'task': {
      if (!arg) return { reply: 'usage: /task TITLE', subscribe: null };
      if (arg.length > 500) return { reply: 'a title is at most 500 characters', subscribe: null };
      const task = board.create({ title: arg }, { kind: 'platform', platform, channel });
      return {
        reply: `Created ${task.id}: ${task.title}. I will tell you when it finishes.`,
        subscribe: task,
      };
    }
    case 'tasks': {
      const open = board
        .list({ limit: 1000 })
        .tasks.filter((t) => OPEN.has(t.status))
        .slice(0, 20);
      return { reply: open.length ? open.map(line).join('\n') : 'No open tasks.', subscribe: null };
    }
    case 'status': {
      try {
        const task = board.get(arg);
        const detail = task.summary ?? task.blockReason ?? task.lastFailureError?.split('\n')[0];
        return { reply: `${line(task)}${detail ? ` — ${detail}` : ''}`, subscribe: null };
      } catch (err) {
        if (err instanceof AppError)
          return { reply: `No task ${arg || '(no id given)'}.`, subscribe: null };
        throw err;
      }
    }
    default:
      return { reply: HELP, subscribe: null };
  }
}
