// Chat commands: /task TITLE, /tasks, /status ID, and for a task this chat created that waits in
// review /approve ID and /changes ID TEXT (docs/workers.md); /approve ID of a task whose first run
// waits for a person, by an approver (docs/mcp.md); /answer ID TEXT to its agent's question.
// Anything else gets a short help. Each message
// is handled in one transaction with what marks it handled (the adapter's position, a delivery
// id), so a crash neither loses nor repeats it (docs/platforms.md).
import { titleProblem } from '../kanban/model/task-title.js';
import type { Task } from '../kanban/model/types.js';
import { createTask } from '../kanban/moves/create-task.js';
import { subscribeChat } from '../kanban/moves/platform-records.js';
import { approveTask, requestChanges } from '../kanban/moves/review.js';
import type { Tx } from '../kanban/moves/tx.js';
import type { ApprovalRules } from '../kanban/approval-rules.js';
import { awaitsApproval } from '../kanban/model/asks.js';
import { approveRun } from '../kanban/moves/approval.js';
import { answerQuestion } from '../kanban/moves/asks.js';

export const HELP =
  'Commands: /task TITLE (create a task), /tasks (open tasks), /status ID (one task), /approve ID and /changes ID TEXT (a task of this chat in review, or waiting for approval), /answer ID TEXT (its agent asked)';

/** How many open tasks /tasks lists; the rest are counted. */
const LISTED = 20;

function line(t: Task): string {
  return `${t.id} [${t.status}] ${t.title}`;
}

export interface ChatMessage {
  platform: string;
  channel: string;
  text: string;
  /** Who wrote it, when the platform says. */
  user?: string;
}

export interface ChatResult {
  reply: string;
  taskId: string | null;
}

/**
 * Runs a chat command in `tx`, the transaction that also marks the message handled (the
 * adapter's position, a delivery id): a task it creates is subscribed to by the chat there too.
 */
export async function handleChatCommand(
  tx: Tx,
  message: ChatMessage,
  approvals: ApprovalRules,
): Promise<ChatResult> {
  const match = /^\/(\w+)(?:@\S+)?(?:\s+([\s\S]*))?$/.exec(message.text.trim());
  const [, command, rest = ''] = match ?? [];
  const arg = rest.trim();
  // The API's title rule, checked before anything is created: a refused title gets its reason.
  if (command === 'task' && arg && titleProblem(arg) === null) {
    const origin = {
      kind: 'platform' as const,
      platform: message.platform,
      channel: message.channel,
      ...(message.user === undefined ? {} : { user: message.user }),
    };
    const needsApproval = approvals.needed(null, null);
    const task = await createTask(tx, { title: arg, needsApproval }, origin);
    // A new task: every one of its events is after cursor 0.
    await subscribeChat(tx, message.platform, message.channel, task.id, 0);
    return {
      reply: needsApproval
        ? `Created ${task.id}: ${task.title}. It needs approval before it runs (/approve ${task.id}).`
        : `Created ${task.id}: ${task.title}. I will tell you when it finishes.`,
      taskId: task.id,
    };
  }
  if (command === 'approve') {
    const gated = await approveGated(tx, message, arg, approvals);
    if (gated) return gated;
  }
  if (command === 'answer') return answerOf(tx, message, arg);
  if (command === 'approve' || command === 'changes') return review(tx, message, command, arg);
  return { reply: await answer(tx, command, arg), taskId: null };
}

/** /approve ID, /changes ID TEXT: only for a task this chat created, only while in review. */
async function review(
  tx: Tx,
  message: ChatMessage,
  command: 'approve' | 'changes',
  arg: string,
): Promise<ChatResult> {
  const [id = '', ...words] = arg.split(/\s+/);
  const text = arg.slice(id.length).trim();
  const usage = command === 'approve' ? 'usage: /approve ID' : 'usage: /changes ID TEXT';
  if (!id || (command === 'changes' && words.length === 0)) return { reply: usage, taskId: null };
  const task = await tx.store.tasks.get(id);
  const o = task?.origin;
  const ours =
    o?.kind === 'platform' && o.platform === message.platform && o.channel === message.channel;
  if (!task || !ours) return { reply: `No task ${id} of this chat.`, taskId: null };
  if (task.status !== 'review')
    return { reply: `Task ${id} is ${task.status}, not in review.`, taskId: null };
  const author = `${message.platform}:${message.channel}`;
  if (command === 'approve') {
    await approveTask(tx, id, author);
    return { reply: `Approved ${id}: it is done.`, taskId: null };
  }
  await requestChanges(tx, id, text, author);
  return {
    reply: `Sent ${id} back with your changes; I will tell you when it is ready again.`,
    taskId: null,
  };
}

/** Who wrote a message, in the words of approvers: `<platform>:<user>`. */
function whoOf(message: ChatMessage): string {
  return `${message.platform}:${message.user ?? '?'}`;
}

function ofThisChat(task: Task | null, message: ChatMessage): boolean {
  const o = task?.origin;
  return o?.kind === 'platform' && o.platform === message.platform && o.channel === message.channel;
}

/**
 * /approve ID of a task whose first run waits for a person: by one of its profile's approvers
 * (any chat user named there), or, with none named, from the chat that created it; null when the
 * task does not wait for an approval (it may be a review's).
 */
async function approveGated(
  tx: Tx,
  message: ChatMessage,
  arg: string,
  approvals: ApprovalRules,
): Promise<ChatResult | null> {
  const id = arg.split(/\s+/)[0] ?? '';
  const task = id ? await tx.store.tasks.get(id) : null;
  if (!task || !awaitsApproval(task.approval)) return null;
  const who = whoOf(message);
  const refusal = approvals.refusal(task, who);
  if (refusal) return { reply: `Not approved: ${refusal}.`, taskId: null };
  if (!approvals.named(task) && !ofThisChat(task, message))
    return { reply: `No task ${id} of this chat.`, taskId: null };
  const approved = await approveRun(tx, id, who, null);
  return {
    reply: `Approved ${id}: it ${approved.status === 'ready' ? 'runs next' : `waits in ${approved.status} for its parents`}.`,
    taskId: null,
  };
}

/** /answer ID TEXT: to the question the agent of a task of this chat asked. */
async function answerOf(tx: Tx, message: ChatMessage, arg: string): Promise<ChatResult> {
  const [id = ''] = arg.split(/\s+/);
  const text = arg.slice(id.length).trim();
  if (!id || !text) return { reply: 'usage: /answer ID TEXT', taskId: null };
  const task = await tx.store.tasks.get(id);
  if (!task || !ofThisChat(task, message))
    return { reply: `No task ${id} of this chat.`, taskId: null };
  if (task.status !== 'blocked' || task.blockKind !== 'question')
    return {
      reply: `Task ${id} is ${task.status}: no question of its waits for an answer.`,
      taskId: null,
    };
  await answerQuestion(tx, id, text, whoOf(message));
  return { reply: `Sent your answer to ${id}; I will tell you when it finishes.`, taskId: null };
}

/** The reply to a command that creates nothing. */
async function answer(tx: Tx, command: string | undefined, arg: string): Promise<string> {
  switch (command) {
    case 'task':
      return arg ? (titleProblem(arg) ?? 'usage: /task TITLE') : 'usage: /task TITLE';
    case 'tasks': {
      const { tasks, total } = await tx.store.tasks.open(LISTED);
      if (total === 0) return 'No open tasks.';
      const more = total - tasks.length;
      return [...tasks.map(line), ...(more > 0 ? [`…and ${more} more`] : [])].join('\n');
    }
    case 'status': {
      const task = arg ? await tx.store.tasks.get(arg) : null;
      if (!task) return `No task ${arg || '(no id given)'}.`;
      const detail = task.summary ?? task.blockReason ?? task.lastFailureError?.split('\n')[0];
      return `${line(task)}${detail ? ` — ${detail}` : ''}`;
    }
    default:
      return HELP;
  }
}
