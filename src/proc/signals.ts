// Signal numbers and names as this machine has them (os.constants.signals): the first name of
// each number (SIGABRT, not SIGIOT), as child_process says them.
import { constants } from 'node:os';

const NAMES = new Map<number, NodeJS.Signals>();
for (const [name, n] of Object.entries(constants.signals))
  if (!NAMES.has(n)) NAMES.set(n, name as NodeJS.Signals);

/** The signal's name, or `SIG<n>` for a number this machine does not name. */
export function signalName(n: number): string {
  return NAMES.get(n) ?? `SIG${n}`;
}
