// Limits on JSON a worker or client hands us (docs/workers.md): at most 1 MiB and 64 levels deep, so a
// hostile body cannot exhaust the stack when it is stored or sent back.
export const MAX_JSON_DEPTH = 64;
export const MAX_RESULT_BYTES = 1024 * 1024;

/** True when `value` nests objects or arrays deeper than `limit` levels (checked without recursion). */
export function nestedDeeperThan(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}
