// A worktree's change against its base as one unified diff, committed or not, untracked files
// included, cut at a bound with a marker.
import { forkPoint } from './evidence.js';
import { git } from './git.js';
import { withStaged } from './staged.js';

export const MAX_DIFF_BYTES = 2 * 1024 * 1024;

export async function worktreeDiff(
  path: string,
  base: string,
  maxBytes = MAX_DIFF_BYTES,
): Promise<string> {
  return withStaged(
    path,
    async (staged) => {
      const from = await forkPoint(path, base, staged.head);
      if (!from) return '';
      const { stdout, truncated } = await git(
        path,
        ['diff', '--no-ext-diff', '--no-textconv', '--cached', '--no-color', '--binary', from],
        { env: staged.env, maxBytes, truncate: true },
      );
      if (!truncated) return stdout;
      // Cut at a line, in bytes, with room for the marker.
      const bytes = Buffer.from(stdout);
      const cut = bytes.subarray(0, bytes.lastIndexOf(10, maxBytes - 200) + 1).toString();
      return `${cut}\n# gatehouse: the diff is longer than ${maxBytes} bytes and was cut here\n`;
    },
    true,
  );
}
