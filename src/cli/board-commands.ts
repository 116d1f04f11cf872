// `gatehouse board copy`: moves a SQLite board into PostgreSQL (see kanban/store/board-copy.ts);
// `gatehouse board backup`: a consistent copy of a live SQLite board (kanban/store/backup.ts).
import { resolve } from 'node:path';
import { ExitCode, ExitError } from '../gateway/exit-codes.js';
import { BackupError, backupBoard } from '../kanban/store/backup.js';
import { CopyError, copyBoard } from '../kanban/store/board-copy.js';
import { cliConfig } from './instance-client.js';
import { join } from 'node:path';
import { redactUrl } from '../kanban/store/url.js';
import { parseFlags, usageError } from './args.js';
import { print } from './output.js';

export async function boardCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'backup') return backupCommand(rest);
  if (sub !== 'copy')
    throw usageError(`board ${sub ?? ''}: the board command's subcommands are copy and backup`);
  const { values } = parseFlags(rest, {
    from: { type: 'string' },
    to: { type: 'string' },
    schema: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (!values.from || !values.to)
    throw usageError('board copy needs --from <sqlite file> and --to <postgres url>');
  const from = resolve(values.from);
  const schema = values.schema ?? 'gatehouse';
  let copied: Record<string, number>;
  try {
    copied = await copyBoard(from, values.to, schema);
  } catch (err) {
    if (err instanceof CopyError) throw new ExitError(ExitCode.failure, err.message);
    throw err;
  }
  const to = redactUrl(values.to);
  print(values.json ?? false, { from, to, schema, copied }, () =>
    [
      `copied ${from} into schema ${schema} of ${to}, verified:`,
      ...Object.entries(copied).map(([table, n]) => `  ${table.padEnd(20)} ${n}`),
    ].join('\n'),
  );
  return 0;
}

/** `board backup FILE`: the configured data dir's SQLite board, copied while its daemon runs. */
async function backupCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    args,
    { config: { type: 'string' }, 'data-dir': { type: 'string' }, json: { type: 'boolean' } },
    1,
  );
  if (positionals.length !== 1) throw usageError('board backup needs one FILE to write');
  const config = cliConfig({ config: values.config, dataDir: values['data-dir'] });
  if (config.store.kind !== 'sqlite')
    throw new ExitError(
      ExitCode.failure,
      'the board is on PostgreSQL: back it up with pg_dump (docs/operations.md)',
    );
  let result;
  try {
    result = await backupBoard(join(config.dataDir, 'gatehouse.db'), resolve(positionals[0]!));
  } catch (err) {
    if (err instanceof BackupError) throw new ExitError(ExitCode.failure, err.message);
    throw err;
  }
  print(values.json ?? false, result, () =>
    [
      `backed up ${result.from} to ${result.to} (${result.bytes} bytes), checked:`,
      `  tasks ${result.tasks}, runs ${result.runs}, events ${result.events}`,
    ].join('\n'),
  );
  return 0;
}
