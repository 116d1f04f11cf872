// Chat commands: /task TITLE, /tasks, /status ID; anything else gets a short help.
import { AppError } from '../errors.js';
import type { Board } from '../kanban/board.js';
import type { Task } from '../kanban/model/types.js';

export const HELP =
  'Commands: /task TITLE (create a task), /tasks (open tasks), /status ID (one task)';

const OPEN = new Set(['todo', 'ready', 'running', 'blocked']);

function line(t: Task): string {
  return `${t.id} [${t.status}] ${t.title}`;
}

/**
 * Handles one chat message and returns the reply. `/task` subscribes the chat to the new task
 * in the same transaction that creates it, so no notification can be missed.
 */
export function handleChatCommand(
  board: Board,
  platform: string,
  channel: string,
  text: string,
  subscribe: (taskId: string, afterEventId: number) => void,
): string {
  const match = /^\/(\w+)(?:@\S+)?(?:\s+([\s\S]*))?$/.exec(text.trim());
  const [, command, rest = ''] = match ?? [];
  const arg = rest.trim();
  switch (command) {
    case 'task': {
      if (!arg) return 'usage: /task TITLE';
      if (arg.length > 500) return 'a title is at most 500 characters';
      const origin = { kind: 'platform' as const, platform, channel };
      const task = board.create({ title: arg }, origin, (_tx, t, eventId) =>
        subscribe(t.id, eventId),
      );
      return `Created ${task.id}: ${task.title}. I will tell you when it finishes.`;
    }
    case 'tasks': {
      const open = board
        .list({ limit: 1000 })
        .tasks.filter((t) => OPEN.has(t.status))
        .slice(0, 20);
      return open.length ? open.map(line).join('\n') : 'No open tasks.';
    }
    case 'status': {
      try {
        const task = board.get(arg);
        const detail = task.summary ?? task.blockReason ?? task.lastFailureError?.split('\n')[0];
        return `${line(task)}${detail ? ` — ${detail}` : ''}`;
      } catch (err) {
        if (err instanceof AppError) return `No task ${arg || '(no id given)'}.`;
        throw err;
      }
    }
    default:
      return HELP;
  }
}
