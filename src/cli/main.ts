// The `gatehouse` command: picks the subcommand, maps errors to exit codes and stderr.
import { ExitCode, isExitError } from '../gateway/exit-codes.js';
import { VERSION } from '../version.js';
import { usageError } from './args.js';

const FIND =
  'Commands that talk to a running gatehouse find it by its data dir: --data-dir D, else --config F (its dataDir), else $GATEHOUSE_DATA_DIR, else ./.gatehouse; or at --url U (else $GATEHOUSE_URL), anywhere. The API token: --token T, else $GATEHOUSE_TOKEN, else api.token of the config.';

const TARGET = '[--config F] [--data-dir D] [--url U] [--token T] [--json]';

/** Each subcommand's own text (`gatehouse task add --help`). */
const SUB_USAGE: Record<string, Record<string, string>> = {
  task: {
    add: `gatehouse task add TITLE [--body B] [--assignee P] [--priority N] [--parent ID]… [--max-runtime 30m] [--max-retries N] [--idempotency-key K] [--repo R] [--model M] [--approval] [--budget-usd 5] [--budget-tokens N] [--budget-runs N] ${TARGET}
  Creates a task; ready at once, or todo until every --parent is done. --repo: the repository
  (a name in workspaces.repos) its worktree is made from; --model: the model its agent profile
  runs it with (agent.model or one of agent.models); --approval: its first run waits in todo
  for a person's approval (task approve), whatever its profile says.`,
    ls: `gatehouse task ls [--status S] [--assignee P] [--limit N] [--cursor C | --all] ${TARGET}
  Lists tasks oldest first, N a page (default 100, at most 1000); the last line says how to get
  the next page (--cursor C), or --all fetches every page. --json: {"tasks", "nextCursor"}.`,
    show: `gatehouse task show ID ${TARGET}
  One task with its runs (outcome, exit status, pid).`,
    archive: `gatehouse task archive ID ${TARGET}
  Archives a task; a running one's worker is ended first.`,
    unblock: `gatehouse task unblock ID ${TARGET}
  Sends a blocked task back to ready (or todo while a parent is not done).`,
    reclaim: `gatehouse task reclaim ID [--force] ${TARGET}
  Ends a running task's worker and sends the task back to ready. A worker that survives SIGKILL
  keeps the claim (409 WORKER_SURVIVED) unless --force.`,
    comment: `gatehouse task comment ID TEXT ${TARGET}
  Adds a comment (author "cli").`,
    log: `gatehouse task log ID [--follow] [--raw] ${TARGET}
  Prints the latest run's transcript: its agent's messages, each tool call and its output, its
  questions and progress (a command's run: its log's lines). --raw prints the log as the worker
  wrote it; --follow goes on until the task ends (--raw --follow beside the daemon only).`,
    'follow-up': `gatehouse task follow-up ID TEXT [--idempotency-key K] ${TARGET}
  Sends a done, blocked or review task back to ready with TEXT as its next run's instructions,
  in the same workspace.`,
    approve: `gatehouse task approve ID [--revision N] ${TARGET}
  Approves a task in review (it is done, its children may run), or a task whose first run
  waits for approval (only at revision N, if given: an edit since then is refused).`,
    answer: `gatehouse task answer ID TEXT ${TARGET}
  Answers the question a blocked task's agent asked: it runs again with TEXT, its session
  resumed.`,
    changes: `gatehouse task changes ID TEXT ${TARGET}
  Sends a task in review back to ready with TEXT as what to change (its next run's
  instructions, and a comment), in the same workspace.`,
    diff: `gatehouse task diff ID ${TARGET}
  Prints the task's worktree against its base as a unified diff: commits, uncommitted and
  untracked files (at most 2 MiB).`,
    pr: `gatehouse task pr ID [--open | --bind URL | --sync] [--json] ${TARGET}
  Prints the task's pull request: its number and link, state, checks, review and rounds.
  --open opens (or adopts) it now, --bind URL binds an existing one of its branch, --sync reads
  the forge now.`,
  },
  worker: {
    complete: `gatehouse worker complete [--summary S] [--result-file F] [--wait 10m]
  Inside a worker: reports the task done (the result a JSON file).`,
    block: `gatehouse worker block --reason R [--wait 10m]
  Inside a worker: reports the task blocked, with the reason a person must act on.`,
    heartbeat: `gatehouse worker heartbeat [--note N] [--wait 30s]
  Inside a worker: says it is alive (a task with a lease needs one in time).`,
  },
};

const WORKER_ENV = `  Worker commands read GATEHOUSE_URL, GATEHOUSE_TASK_ID and GATEHOUSE_RUN_TOKEN. While the
  daemon cannot be reached they retry for --wait, then complete and block leave the verdict in
  $GATEHOUSE_RUN_DIR/result.json and exit 0.`;

const COMMAND_USAGE: Record<string, string> = {
  run: `gatehouse run [--config F] [--data-dir D] [--host H] [--port P] [--replace]
  Runs the daemon in the foreground (its pid is the one systemd supervises).
  --replace  take over from a running instance of the same data dir`,
  status: `gatehouse status [--config F] [--data-dir D] [--url U] [--token T] [--json]
  Is an instance running for this data dir (or serving at U): pid, port, uptime, readiness,
  board counts, platforms. Exit 0 running, 3 not running, 1 when the token is refused.`,
  stop: `gatehouse stop [--config F] [--data-dir D]
  Planned stop of the running instance (it exits 0; under the shipped unit it stays stopped).`,
  task: Object.values(SUB_USAGE.task!).join('\n'),
  board: `gatehouse board copy --from FILE --to URL [--schema S] [--json]
  Copies a SQLite board (FILE, e.g. .gatehouse/gatehouse.db, its daemon stopped) into the
  PostgreSQL database at URL (postgres://…), schema S (default gatehouse): every task, run,
  event (with its id), comment, link, subscription and platform state, in one transaction, and
  prints the verified counts. Refuses (exit 1, nothing written) a target that already holds a
  task, run or event; a copy that fails or is killed half-way has written nothing.
gatehouse board backup FILE [--config F] [--data-dir D] [--json]
  Copies the data dir's SQLite board to FILE while its daemon runs (SQLite's online backup: one
  moment's board, checked, never over a file that exists). Restore: stop the daemon, put FILE
  in place of <dataDir>/gatehouse.db (removing gatehouse.db-wal and -shm), start it.`,
  worker: `${Object.values(SUB_USAGE.worker!).join('\n')}\n${WORKER_ENV}`,
};

const USAGE = `usage: gatehouse <command> [options]    (gatehouse <command> [subcommand] --help for one)

${Object.values(COMMAND_USAGE).join('\n\n')}

${FIND}
gatehouse --version prints the version.
`;

/** The help asked for: a subcommand's own, else the command's. */
function helpFor(name: string, rest: string[]): string {
  const sub = SUB_USAGE[name]?.[rest[0] ?? ''];
  if (sub) return `${sub}\n${name === 'worker' ? WORKER_ENV : ''}\n`;
  return `${COMMAND_USAGE[name]}\n\n${['worker', 'run', 'board'].includes(name) ? '' : `${FIND}\n`}`;
}

type Command = (args: string[], env: NodeJS.ProcessEnv) => Promise<number | void>;

// Each command loads only its own modules: a worker's `gatehouse worker complete` or a
// `gatehouse status` starts without the daemon's server, database and schemas.
const COMMANDS: Record<string, () => Promise<Command>> = {
  run: async () => (await import('./run-command.js')).runCommand,
  status: async () => (await import('./daemon-commands.js')).statusCommand,
  stop: async () => (await import('./daemon-commands.js')).stopCommand,
  task: async () => (await import('./task-commands.js')).taskCommand,
  worker: async () => (await import('./worker-commands.js')).workerCommand,
  board: async () => (await import('./board-commands.js')).boardCommand,
};

export async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  try {
    if (name === '--help' || name === '-h' || name === 'help') {
      process.stdout.write(USAGE);
      return;
    }
    if (name === '--version' || name === '-V') {
      process.stdout.write(`${VERSION}\n`);
      return;
    }
    const command = name === undefined ? undefined : COMMANDS[name];
    if (!command) throw usageError(name ? `unknown command "${name}"\n${USAGE}` : USAGE);
    if (rest.includes('--help') || rest.includes('-h')) {
      process.stdout.write(helpFor(name!, rest));
      return;
    }
    const code = await (await command())(rest, process.env);
    if (typeof code === 'number') process.exit(code);
  } catch (err) {
    if (isExitError(err)) {
      process.stderr.write(`gatehouse: ${err.message}\n`);
      process.exit(err.exitCode);
    }
    process.stderr.write(`gatehouse: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(ExitCode.failure);
  }
}
