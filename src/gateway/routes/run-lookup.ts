// The run a /runs/:runId route reads the files of: 404 for an unknown run, or one whose files
// retention removed.
import { AppError } from '../../errors.js';
import type { Board } from '../../kanban/board.js';
import { RUN_ID } from '../../kanban/model/ids.js';
import type { Run } from '../../kanban/model/types.js';

export async function runWithFiles(board: Board, runId: string): Promise<Run> {
  const run = RUN_ID.test(runId) ? await board.runs.get(runId) : null;
  if (!run) throw new AppError('RUN_NOT_FOUND', `no run ${runId}`);
  if (run.filesPrunedAt !== null)
    throw new AppError(
      'RUN_NOT_FOUND',
      `the log of run ${run.id} was removed by retention (retention.runDays)`,
    );
  return run;
}
