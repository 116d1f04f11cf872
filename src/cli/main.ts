// The `gatehouse` command: picks the subcommand, maps errors to exit codes and stderr.
import { ExitCode, isExitError } from '../gateway/exit-codes.js';
import { VERSION } from '../version.js';
import { usageError } from './args.js';

const FIND =
  'Commands that talk to a running gatehouse find it by its data dir: --data-dir D, else --config F (its dataDir), else $GATEHOUSE_DATA_DIR, else ./.gatehouse.';

const COMMAND_USAGE: Record<string, string> = {
  run: `gatehouse run [--config F] [--data-dir D] [--host H] [--port P] [--replace]
  Runs the daemon in the foreground (its pid is the one systemd supervises).
  --replace  take over from a running instance of the same data dir`,
  status: `gatehouse status [--config F] [--data-dir D] [--json]
  Is an instance running for this data dir: pid, port, uptime, board counts, platforms.
  Exit 0 running, 3 not running.`,
  stop: `gatehouse stop [--config F] [--data-dir D]
  Planned stop of the running instance (it exits 0; under the shipped unit it stays stopped).`,
  task: `gatehouse task add TITLE [--body B] [--assignee P] [--priority N] [--parent ID]… [--max-runtime 30m] [--max-retries N]
gatehouse task ls [--status S] [--assignee P]
gatehouse task show|archive|unblock ID · task reclaim ID [--force] · task comment ID TEXT · task log ID [--follow]
  Each also takes --config F, --data-dir D and --json.`,
  board: `gatehouse board copy --from FILE --to URL [--schema S] [--json]
  Copies a SQLite board (FILE, e.g. .gatehouse/gatehouse.db, its daemon stopped) into the
  PostgreSQL database at URL (postgres://…), schema S (default gatehouse): every task, run,
  event (with its id), comment, link, subscription and platform state, in one transaction, and
  prints the verified counts. Refuses (exit 1, nothing written) a target that already holds a
  task, run or event; a copy that fails or is killed half-way has written nothing.`,
  worker: `gatehouse worker complete [--summary S] [--result-file F] [--wait 10m]
gatehouse worker block --reason R [--wait 10m]
gatehouse worker heartbeat [--note N] [--wait 30s]
  Inside a worker: reads GATEHOUSE_URL, GATEHOUSE_TASK_ID and GATEHOUSE_RUN_TOKEN. While the
  daemon cannot be reached it retries for --wait, then complete and block leave the verdict in
  $GATEHOUSE_RUN_DIR/result.json and exit 0.`,
};

const USAGE = `usage: gatehouse <command> [options]    (gatehouse <command> --help for one)

${Object.values(COMMAND_USAGE).join('\n\n')}

${FIND}
gatehouse --version prints the version.
`;

type Command = (args: string[], env: NodeJS.ProcessEnv) => Promise<number | void>;

// Each command loads only its own modules: a worker's `gatehouse worker complete` or a
// `gatehouse status` starts without the daemon's server, database and schemas.
const COMMANDS: Record<string, () => Promise<Command>> = {
  run: async () => (await import('./daemon-commands.js')).runCommand,
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
      process.stdout.write(
        `${COMMAND_USAGE[name!]}\n\n${['worker', 'run', 'board'].includes(name!) ? '' : `${FIND}\n`}`,
      );
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
