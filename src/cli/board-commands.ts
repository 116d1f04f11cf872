// `gatehouse board copy`: moves a SQLite board into PostgreSQL (see kanban/store/board-copy.ts).
import { resolve } from 'node:path';
import { ExitCode, ExitError } from '../gateway/exit-codes.js';
import { CopyError, copyBoard } from '../kanban/store/board-copy.js';
import { redactUrl } from '../kanban/store/url.js';
import { parseFlags, usageError } from './args.js';
import { print } from './output.js';

export async function boardCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'copy')
    throw usageError(`board ${sub ?? ''}: the board command has one subcommand, copy`);
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
