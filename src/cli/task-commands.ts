// `gatehouse task …`: board operations through the running instance's API.
import { type Answer, type RequestBody, type Schemas } from './api-client.js';
import { parseDollars, parseDuration, parseFlags, parseInteger, usageError } from './args.js';
import { print } from './output.js';
import { common, connect, oneId } from './task-api.js';
import { log } from './task-log.js';

type Task = Schemas['Task'];
type TaskDetail = Schemas['TaskDetail'];

function taskLine(t: Task): string {
  const who = t.assignee ?? '-';
  // One line a task: a title's own line breaks are shown, not followed.
  const title = t.title.replace(/\n/g, '\\n').replace(/\t/g, ' ');
  return `${t.id}  ${t.status.padEnd(8)}  ${String(t.priority).padStart(4)}  ${who.padEnd(10)}  ${title}`;
}

const LIST_HEADER = `${'ID'.padEnd(14)}  ${'STATUS'.padEnd(8)}  PRIO  ${'ASSIGNEE'.padEnd(10)}  TITLE`;

function taskDetail(t: TaskDetail): string {
  const lines = [
    `${t.id}  ${t.title}`,
    `status: ${t.status}${t.blockReason ? ` (${t.blockReason})` : ''}`,
    `assignee: ${t.assignee ?? '(default profile)'}  priority: ${t.priority}  failures: ${t.consecutiveFailures}`,
  ];
  if (t.parents.length > 0) lines.push(`parents: ${t.parents.join(', ')}`);
  if (t.children.length > 0) lines.push(`children: ${t.children.join(', ')}`);
  if (t.summary) lines.push(`summary: ${t.summary}`);
  const ws = t.workspace;
  if (ws)
    lines.push(
      `workspace: ${ws.kind} ${ws.path}${ws.branch ? ` on ${ws.branch} from ${ws.base}` : ''} (${ws.state}${ws.preservedRef ? `, kept on ${ws.preservedRef}` : ''}, host ${ws.host})`,
    );
  if (t.lastFailureError) lines.push(`last failure: ${t.lastFailureError}`);
  if (t.body) lines.push('', t.body);
  for (const r of t.runs) {
    const how = r.outcome ?? 'running';
    const code = r.signal ?? (r.exitCode === null ? '' : `exit ${r.exitCode}`);
    const changed = r.workspace
      ? `  ${r.workspace.filesChanged} files +${r.workspace.insertions} -${r.workspace.deletions}${r.workspace.dirty ? ' (uncommitted)' : ''}`
      : '';
    lines.push(`run ${r.id}  ${how}  ${code}  pid ${r.pid ?? '-'}${changed}`);
  }
  return lines.join('\n');
}

async function add(args: string[]): Promise<void> {
  const { values, positionals } = parseFlags(
    args,
    {
      ...common,
      body: { type: 'string' },
      assignee: { type: 'string' },
      priority: { type: 'string' },
      parent: { type: 'string', multiple: true },
      'max-runtime': { type: 'string' },
      'max-retries': { type: 'string' },
      'idempotency-key': { type: 'string' },
      repo: { type: 'string' },
      model: { type: 'string' },
      approval: { type: 'boolean' },
      'budget-usd': { type: 'string' },
      'budget-tokens': { type: 'string' },
      'budget-runs': { type: 'string' },
    },
    1,
  );
  const title = positionals[0];
  if (!title) throw usageError('task add needs a TITLE');
  const body: RequestBody<'/tasks', 'post'> = { title };
  if (values.body !== undefined) body.body = values.body;
  if (values.assignee !== undefined) body.assignee = values.assignee;
  if (values.repo !== undefined) body.repo = values.repo;
  if (values.model !== undefined) body.model = values.model;
  if (values.approval) body.approval = 'before_run';
  const budget: NonNullable<typeof body.budget> = {};
  if (values['budget-usd'] !== undefined)
    budget.usd = parseDollars('--budget-usd', values['budget-usd']);
  if (values['budget-tokens'] !== undefined)
    budget.tokens = parseInteger('--budget-tokens', values['budget-tokens'], 1, 1e12);
  if (values['budget-runs'] !== undefined)
    budget.runs = parseInteger('--budget-runs', values['budget-runs'], 1, 1e6);
  if (Object.keys(budget).length > 0) body.budget = budget;
  if (values.priority !== undefined)
    body.priority = parseInteger('--priority', values.priority, -1_000_000, 1_000_000);
  if (values.parent) body.parents = values.parent;
  if (values['max-runtime'] !== undefined)
    body.maxRuntimeSeconds = parseDuration('--max-runtime', values['max-runtime']);
  if (values['max-retries'] !== undefined)
    body.maxRetries = parseInteger('--max-retries', values['max-retries'], 1, 1000);
  const key = values['idempotency-key'];
  if (key !== undefined && !/^[\x21-\x7e]{1,255}$/.test(key))
    throw usageError('--idempotency-key: 1-255 visible ASCII characters (no spaces)');
  // Run again with the same key (a retry after a timeout), it answers with the same task.
  const headers: Record<string, string> = key === undefined ? {} : { 'idempotency-key': key };
  const task = (await connect(values).call('POST', '/tasks', body, headers)) as Answer<
    '/tasks',
    'post',
    201
  >;
  print(values.json ?? false, task, () => taskLine(task));
}

async function list(args: string[]): Promise<void> {
  const { values } = parseFlags(args, {
    ...common,
    status: { type: 'string' },
    assignee: { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
    all: { type: 'boolean' },
  });
  if (values.all && values.cursor !== undefined)
    throw usageError('task ls takes --all or --cursor, not both');
  const limit = values.limit === undefined ? 100 : parseInteger('--limit', values.limit, 1, 1000);
  const api = connect(values);
  const query = new URLSearchParams({ limit: String(values.all ? 1000 : limit) });
  if (values.status) query.set('status', values.status);
  if (values.assignee) query.set('assignee', values.assignee);
  if (values.cursor !== undefined) query.set('cursor', values.cursor);
  const tasks: Task[] = [];
  let nextCursor: string | null = null;
  do {
    const page = (await api.call('GET', `/tasks?${query.toString()}`)) as Answer<'/tasks', 'get'>;
    tasks.push(...page.tasks);
    nextCursor = page.nextCursor;
    if (nextCursor) query.set('cursor', nextCursor);
  } while (values.all && nextCursor);
  print(values.json ?? false, { tasks, nextCursor }, () => {
    if (tasks.length === 0) return '(no tasks)';
    const lines = [LIST_HEADER, ...tasks.map(taskLine)];
    if (nextCursor) lines.push('', `more: add --cursor ${nextCursor} for the next page, or --all`);
    return lines.join('\n');
  });
}

async function show(args: string[]): Promise<void> {
  const { values, positionals } = parseFlags(args, common, 1);
  const id = oneId(positionals, 'task show');
  const task = (await connect(values).call('GET', `/tasks/${id}`)) as Answer<'/tasks/{id}', 'get'>;
  print(values.json ?? false, task, () => taskDetail(task));
}

function transition(action: 'archive' | 'unblock') {
  return async (args: string[]) => {
    const { values, positionals } = parseFlags(args, common, 1);
    const id = oneId(positionals, `task ${action}`);
    const task = (await connect(values).call('POST', `/tasks/${id}/${action}`)) as Task;
    print(values.json ?? false, task, () => taskLine(task));
  };
}

async function reclaim(args: string[]): Promise<void> {
  const { values, positionals } = parseFlags(args, { ...common, force: { type: 'boolean' } }, 1);
  const id = oneId(positionals, 'task reclaim');
  const body: RequestBody<'/tasks/{id}/reclaim', 'post'> = { force: values.force ?? false };
  const task = (await connect(values).call('POST', `/tasks/${id}/reclaim`, body)) as Task;
  print(values.json ?? false, task, () => taskLine(task));
}

async function comment(args: string[]): Promise<void> {
  const { values, positionals } = parseFlags(args, common, 2);
  const id = oneId(positionals, 'task comment');
  const text = positionals[1];
  if (!text) throw usageError('task comment needs TEXT');
  const body: RequestBody<'/tasks/{id}/comments', 'post'> = { text, author: 'cli' };
  const made = (await connect(values).call('POST', `/tasks/${id}/comments`, body)) as Answer<
    '/tasks/{id}/comments',
    'post',
    201
  >;
  print(values.json ?? false, made, () => `commented on ${id}`);
}

/** More to do on a done or blocked task: it runs again with TEXT as its instructions. */
async function followUpTask(args: string[]): Promise<void> {
  const { values, positionals } = parseFlags(
    args,
    { ...common, 'idempotency-key': { type: 'string' } },
    2,
  );
  const id = oneId(positionals, 'task follow-up');
  const text = positionals[1];
  if (!text) throw usageError('task follow-up needs TEXT (the next run’s instructions)');
  const key = values['idempotency-key'];
  if (key !== undefined && !/^[\x21-\x7e]{1,255}$/.test(key))
    throw usageError('--idempotency-key: 1-255 visible ASCII characters (no spaces)');
  const body: RequestBody<'/tasks/{id}/follow-up', 'post'> = { text, author: 'cli' };
  const headers: Record<string, string> = key === undefined ? {} : { 'idempotency-key': key };
  const task = (await connect(values).call(
    'POST',
    `/tasks/${id}/follow-up`,
    body,
    headers,
  )) as Task;
  print(values.json ?? false, task, () => taskLine(task));
}

/** A task in review approved (done), or a task's first run approved (at --revision, if given). */
async function approve(args: string[]): Promise<void> {
  const { values, positionals } = parseFlags(args, { ...common, revision: { type: 'string' } }, 1);
  const id = oneId(positionals, 'task approve');
  const revision = values.revision === undefined ? undefined : Number(values.revision);
  if (revision !== undefined && !(Number.isInteger(revision) && revision >= 1))
    throw usageError('--revision: a whole number from 1 (the revision shown by task show)');
  const body: RequestBody<'/tasks/{id}/approve', 'post'> = {
    by: 'cli',
    ...(revision === undefined ? {} : { revision }),
  };
  const task = (await connect(values).call('POST', `/tasks/${id}/approve`, body)) as Task;
  print(values.json ?? false, task, () => taskLine(task));
}

/** The answer to the question a blocked task's agent asked: it runs again with it. */
async function answer(args: string[]): Promise<void> {
  const { values, positionals } = parseFlags(args, common, 2);
  const id = oneId(positionals, 'task answer');
  const text = positionals[1];
  if (!text) throw usageError('task answer needs TEXT (the answer to its agent’s question)');
  const body: RequestBody<'/tasks/{id}/answer', 'post'> = { text, author: 'cli' };
  const task = (await connect(values).call('POST', `/tasks/${id}/answer`, body)) as Task;
  print(values.json ?? false, task, () => taskLine(task));
}

/** A task in review sent back with TEXT as what to change. */
async function changes(args: string[]): Promise<void> {
  const { values, positionals } = parseFlags(args, common, 2);
  const id = oneId(positionals, 'task changes');
  const text = positionals[1];
  if (!text) throw usageError('task changes needs TEXT (what to change)');
  const body: RequestBody<'/tasks/{id}/request-changes', 'post'> = { text, author: 'cli' };
  const task = (await connect(values).call('POST', `/tasks/${id}/request-changes`, body)) as Task;
  print(values.json ?? false, task, () => taskLine(task));
}

/** The task's worktree against its base, as a unified diff (GET /tasks/:id/diff). */
async function diff(args: string[]): Promise<void> {
  const { values, positionals } = parseFlags(args, common, 1);
  const id = oneId(positionals, 'task diff');
  process.stdout.write(String(await connect(values).call('GET', `/tasks/${id}/diff`)));
}

/** The task's pull request (docs/pull-requests.md): shown, opened, bound or synced now. */
async function pr(args: string[]): Promise<void> {
  const { values, positionals } = parseFlags(
    args,
    { ...common, open: { type: 'boolean' }, bind: { type: 'string' }, sync: { type: 'boolean' } },
    1,
  );
  const id = oneId(positionals, 'task pr');
  const chosen = [values.open, values.bind !== undefined, values.sync].filter(Boolean).length;
  if (chosen > 1) throw usageError('task pr takes one of --open, --bind URL and --sync');
  const api = connect(values);
  const task = (
    values.open
      ? await api.call('POST', `/tasks/${id}/pr`, {})
      : values.bind !== undefined
        ? await api.call('POST', `/tasks/${id}/pr`, { url: values.bind })
        : values.sync
          ? await api.call('POST', `/tasks/${id}/pr/sync`)
          : await api.call('GET', `/tasks/${id}`)
  ) as Task;
  print(values.json ?? false, task.pr, () => prLine(task));
}

function prLine(task: Task): string {
  const pr = task.pr;
  if (!pr) return `${task.id} has no pull request (${task.status})`;
  return [
    `#${pr.number} ${pr.state}${pr.draft ? ' (draft)' : ''}  ${pr.url}`,
    `checks ${pr.checks}, review ${pr.review.replace('_', ' ')}, ${pr.rounds} round${pr.rounds === 1 ? '' : 's'} of feedback; task ${task.status}`,
  ].join('\n');
}

const SUBCOMMANDS: Record<string, (args: string[]) => Promise<void>> = {
  add,
  ls: list,
  show,
  archive: transition('archive'),
  reclaim,
  unblock: transition('unblock'),
  comment,
  log,
  diff,
  'follow-up': followUpTask,
  approve,
  answer,
  changes,
  pr,
};

export async function taskCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const command = sub === undefined ? undefined : SUBCOMMANDS[sub];
  if (!command) throw usageError(`task needs one of: ${Object.keys(SUBCOMMANDS).join(', ')}`);
  await command(rest);
}
