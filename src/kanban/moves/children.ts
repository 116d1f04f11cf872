// Moves of the children of a task whose status changed: promote (every parent done) and orphan
// (a parent archived before it was done).
import { parentSatisfied } from '../model/transitions.js';
import { applyMove } from './apply.js';
import type { Tx } from './tx.js';

/** Every todo child of `parentId` whose remaining parents are all done becomes ready. */
export function promoteChildren(tx: Tx, parentId: string, childIds?: readonly string[]): void {
  // Children share their parents (a fan-out shares this one): each is read once. Promoting a
  // child does not change whether it satisfies its own children (that needs done).
  const satisfied = new Map<string, boolean>();
  const parentDone = (id: string) => {
    let done = satisfied.get(id);
    if (done === undefined) satisfied.set(id, (done = parentSatisfied(tx.store.tasks.get(id))));
    return done;
  };
  for (const childId of childIds ?? tx.store.tasks.children(parentId)) {
    const child = tx.store.tasks.get(childId);
    if (child?.status !== 'todo') continue;
    if (!child.parents.every(parentDone)) continue;
    if (applyMove(tx, child, 'promote'))
      tx.emit({ taskId: childId, runId: null, kind: 'promoted', payload: { after: parentId } });
  }
}

/** Every todo child of a parent archived before it was done is blocked: it could never run. */
export function orphanChildren(tx: Tx, parentId: string): void {
  if (parentSatisfied(tx.store.tasks.get(parentId))) return;
  for (const childId of tx.store.tasks.children(parentId)) {
    const child = tx.store.tasks.get(childId);
    if (child?.status !== 'todo') continue;
    const reason = `parent ${parentId} archived`;
    if (applyMove(tx, child, 'orphan', { reason }))
      tx.emit({
        taskId: childId,
        runId: null,
        kind: 'blocked',
        payload: { reason, parent: parentId },
      });
  }
}
