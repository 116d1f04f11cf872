// Moves of the children of a task whose status changed: promote (every parent done) and orphan
// (a parent archived before it was done).
import { awaitsApproval } from '../model/asks.js';
import { parentSatisfied } from '../model/transitions.js';
import { applyMove } from './apply.js';
import type { Tx } from './tx.js';

/** Every todo child of `parentId` whose remaining parents are all done becomes ready. */
export async function promoteChildren(
  tx: Tx,
  parentId: string,
  childIds?: readonly string[],
): Promise<void> {
  // Children share their parents (a fan-out shares this one): each is read once. Promoting a
  // child does not change whether it satisfies its own children (that needs done).
  const satisfied = new Map<string, boolean>();
  const parentDone = async (id: string) => {
    let done = satisfied.get(id);
    if (done === undefined)
      satisfied.set(id, (done = parentSatisfied(await tx.store.tasks.get(id))));
    return done;
  };
  for (const childId of childIds ?? (await tx.store.tasks.children(parentId))) {
    const child = await tx.store.tasks.get(childId);
    if (child?.status !== 'todo') continue;
    // Its first run waits for a person's approval (docs/mcp.md): approving it promotes it.
    if (awaitsApproval(child.approval)) continue;
    // Given to attempts (docs/attempts.md): they decide what becomes of it.
    if (child.awaiting === 'attempts') continue;
    if (!(await allOf(child.parents, parentDone))) continue;
    if (await applyMove(tx, child, 'promote'))
      tx.emit({
        taskId: childId,
        runId: null,
        kind: 'promoted',
        payload: { after: parentId },
      });
  }
}

/** Every todo child of a parent archived before it was done is blocked: it could never run. */
export async function orphanChildren(tx: Tx, parentId: string): Promise<void> {
  if (parentSatisfied(await tx.store.tasks.get(parentId))) return;
  for (const childId of await tx.store.tasks.children(parentId)) {
    const child = await tx.store.tasks.get(childId);
    if (child?.status !== 'todo') continue;
    const reason = `parent ${parentId} archived`;
    if (await applyMove(tx, child, 'orphan', { reason }))
      tx.emit({
        taskId: childId,
        runId: null,
        kind: 'blocked',
        payload: { reason, parent: parentId },
      });
  }
}

/** Whether `test` holds for every item, asked one at a time and stopping at the first no. */
async function allOf(
  items: readonly string[],
  test: (id: string) => Promise<boolean>,
): Promise<boolean> {
  for (const item of items) if (!(await test(item))) return false;
  return true;
}

/** Whether every parent of `task` is done (a follow-up's or change request's target). */
export async function parentsAllDone(
  tx: Tx,
  task: { parents: readonly string[] },
): Promise<boolean> {
  for (const parentId of task.parents)
    if (!parentSatisfied(await tx.store.tasks.get(parentId))) return false;
  return true;
}
