// Chat commands: /task TITLE, /tasks, /status ID; anything else gets a short help. Each message
// is handled in one transaction with what marks it handled (the adapter's position, a delivery
// id), so a crash neither loses nor repeats it (SPEC §7).
import { AppError } from '../errors.js';
import type { Board } from '../kanban/board.js';
import { titleProblem } from '../kanban/model/task-title.js';
import type { Task } from '../kanban/model/types.js';

export const HELP =
  'Commands: /task TITLE (create a task), /tasks (open tasks), /status ID (one task)';

/** How many open tasks /tasks lists; the rest are counted. */
const LISTED = 20;

function line(t: Task): string {
  return `${t.id} [${t.status}] ${t.title}`;
}

export interface ChatMessage {
  platform: string;
  channel: string;
  text: string;
}

export interface ChatHooks {
  /** Subscribes the chat to a task it created (in the creating transaction). */
  subscribe: (taskId: string, afterEventId: number) => void;
  /** Marks the message handled; runs in the transaction of whatever it created. */
  record: (createdTaskId: string | null) => void;
}

export interface ChatResult {
  reply: string;
  taskId: string | null;
}

export function handleChatCommand(
  board: Board,
  message: ChatMessage,
  hooks: ChatHooks,
): ChatResult {
  const match = /^\/(\w+)(?:@\S+)?(?:\s+([\s\S]*))?$/.exec(message.text.trim());
  const [, command, rest = ''] = match ?? [];
  const arg = rest.trim();
  // The API's title rule, checked before anything is created: a refused title gets its reason.
  if (command === 'task' && arg && titleProblem(arg) === null) {
    const origin = {
      kind: 'platform' as const,
      platform: message.platform,
      channel: message.channel,
    };
    const task = board.create({ title: arg }, origin, (_tx, t, eventId) => {
      hooks.subscribe(t.id, eventId);
      hooks.record(t.id);
    });
    return {
      reply: `Created ${task.id}: ${task.title}. I will tell you when it finishes.`,
      taskId: task.id,
    };
  }
  board.transact(() => hooks.record(null));
  return { reply: answer(board, command, arg), taskId: null };
}

/** The reply to a command that creates nothing. */
function answer(board: Board, command: string | undefined, arg: string): string {
  switch (command) {
    case 'task':
      return arg ? (titleProblem(arg) ?? 'usage: /task TITLE') : 'usage: /task TITLE';
    case 'tasks': {
      const { tasks, total } = board.tasks.open(LISTED);
      if (total === 0) return 'No open tasks.';
      const more = total - tasks.length;
      return [...tasks.map(line), ...(more > 0 ? [`…and ${more} more`] : [])].join('\n');
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
