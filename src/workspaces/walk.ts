// Every entry under a folder, depth first, links as themselves and never followed.
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Calls `visit` for each entry under `top`; a visit that answers true ends the walk. */
export async function walk(
  top: string,
  visit: (full: string, entry: Dirent, dir: string) => Promise<boolean | void> | boolean | void,
): Promise<void> {
  const stack = [top];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const full = join(dir, entry.name);
      if (await visit(full, entry, dir)) return;
      // A link to a folder is a link (Dirent says so without following it).
      if (entry.isDirectory()) stack.push(full);
    }
  }
}
