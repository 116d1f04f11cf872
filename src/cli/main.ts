// The `gatehouse` command: picks the subcommand, maps errors to exit codes and stderr.
import { ExitCode, ExitError } from '../gateway/exit-codes.js';
import { usageError } from './args.js';
import { runCommand, statusCommand, stopCommand } from './daemon-commands.js';
import { taskCommand } from './task-commands.js';
import { workerCommand } from './worker-commands.js';

const USAGE = `usage: gatehouse <command> [options]

  run [--config F] [--data-dir D] [--host H] [--port P] [--replace]
  status [--json]
  stop
  task add TITLE [--body B] [--assignee P] [--priority N] [--parent ID]… [--max-runtime 30m] [--max-retries N]
  task ls [--status S] [--assignee P]
  task show|archive|unblock ID · task reclaim ID [--force] · task comment ID TEXT · task log ID [--follow]

  worker complete [--summary S] [--result-file F] [--wait 10m] · worker block --reason R [--wait 10m] · worker heartbeat [--note N] [--wait 30s]

Every command but worker takes --config F and --data-dir D to find the instance, and --json for JSON output.
`;

type Command = (args: string[], env: NodeJS.ProcessEnv) => Promise<number | void>;

const COMMANDS: Record<string, Command> = {
  run: runCommand,
  status: statusCommand,
  stop: stopCommand,
  task: taskCommand,
  worker: workerCommand,
};

export async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  try {
    if (name === '--help' || name === 'help') {
      process.stdout.write(USAGE);
      return;
    }
    const command = name === undefined ? undefined : COMMANDS[name];
    if (!command) throw usageError(name ? `unknown command "${name}"\n${USAGE}` : USAGE);
    const code = await command(rest, process.env);
    if (typeof code === 'number') process.exit(code);
  } catch (err) {
    if (err instanceof ExitError) {
      process.stderr.write(`gatehouse: ${err.message}\n`);
      process.exit(err.exitCode);
    }
    process.stderr.write(`gatehouse: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(ExitCode.failure);
  }
}
