// What each operator tool does (docs/mcp.md): the API's own actions, with its rules, for a person
// who hands work to gatehouse from the agent they already run.
import { publicRun } from '../kanban/store/records/run.js';
import type { ApprovalRules } from '../kanban/approval-rules.js';
import type { Board } from '../kanban/board.js';
import { awaitsApproval } from '../kanban/model/asks.js';
import type { Task } from '../kanban/model/types.js';
import type { OperatorActions } from '../kanban/operator-actions.js';
import { AppError } from '../errors.js';

export interface OperatorToolDeps {
  board: Board;
  operator: OperatorActions;
  approvals: ApprovalRules;
  /** Why a task may not ask for this repo or model with this assignee (as POST /tasks). */
  inputProblem: (args: {
    repo?: string | null;
    model?: string | null;
    assignee?: string | null;
  }) => string | null;
}

type Args = Record<string, unknown>;
const AUTHOR = 'operator (mcp)';

const brief = (t: Task) => ({
  id: t.id,
  title: t.title,
  status: t.status,
  assignee: t.assignee,
  summary: t.summary,
  awaiting: t.awaiting,
  blockReason: t.blockReason,
});

export async function callOperatorTool(
  deps: OperatorToolDeps,
  name: string,
  args: Args,
): Promise<unknown> {
  const { board, operator } = deps;
  const id = args.id as string;
  const text = args.text as string;
  switch (name) {
    case 'create_task': {
      const problem = deps.inputProblem(args);
      if (problem) throw new AppError('VALIDATION_FAILED', problem);
      const { approval, ...fields } = args;
      const assignee = (fields.assignee as string | null | undefined) ?? null;
      const task = await board.create(
        {
          ...(fields as { title: string }),
          needsApproval: deps.approvals.needed(assignee, approval as 'before_run' | null),
        },
        { kind: 'api' },
      );
      return brief(task);
    }
    case 'list_tasks': {
      const page = await board.list({
        status: args.status as Task['status'] | undefined,
        assignee: args.assignee as string | undefined,
        limit: typeof args.limit === 'number' ? args.limit : 20,
        order: 'desc',
      });
      return { tasks: page.tasks.map(brief) };
    }
    case 'get_task': {
      const { task, runs } = await board.detail(id);
      return { ...task, runs: runs.map(publicRun) };
    }
    case 'add_comment':
      return board.comment(id, text, AUTHOR);
    case 'follow_up':
      return brief(await board.followUp(id, text, AUTHOR));
    case 'approve': {
      const task = await board.get(id);
      if (!awaitsApproval(task.approval)) return brief(await board.approve(id, AUTHOR));
      const refusal = deps.approvals.refusal(task, 'api');
      if (refusal) throw new AppError('FORBIDDEN', refusal);
      const revision = typeof args.revision === 'number' ? args.revision : null;
      return brief(await board.approveRun(id, AUTHOR, revision));
    }
    case 'request_changes':
      return brief(await board.requestChanges(id, text, AUTHOR));
    case 'answer':
      return brief(await board.answer(id, text, AUTHOR));
    case 'archive':
      return brief(await operator.archive(id));
    default:
      throw new AppError('NOT_FOUND', `no tool ${name}`);
  }
}
