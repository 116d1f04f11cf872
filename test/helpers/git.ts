// Real git repositories for the workspace tests, made in a test's temp dir.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './daemon.js';

const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'test',
  GIT_AUTHOR_EMAIL: 'test@localhost',
  GIT_COMMITTER_NAME: 'test',
  GIT_COMMITTER_EMAIL: 'test@localhost',
  GIT_CONFIG_NOSYSTEM: '1',
  LC_ALL: 'C',
};

/** `git -C cwd args…`'s output, trimmed; throws with git's message on failure. */
export function gitOut(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, ...args], { env: ENV, encoding: 'utf8' }).trim();
}

/** Exit code of `git -C cwd args…` (0 or git's). */
export function gitCode(cwd: string, ...args: string[]): number {
  try {
    execFileSync('git', ['-C', cwd, ...args], { env: ENV, stdio: 'ignore' });
    return 0;
  } catch (err) {
    return (err as { status?: number }).status ?? -1;
  }
}

/** A repository on branch main with `files` committed (default: a README and a source file). */
export function makeRepo(
  files: Record<string, string> = { 'README.md': '# app\n', 'src/app.js': 'export {};\n' },
): string {
  const path = join(tempDir('gatehouse-repo-'), 'app');
  mkdirSync(path);
  gitOut(path, 'init', '--quiet', '--initial-branch=main');
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(path, name, '..'), { recursive: true });
    writeFileSync(join(path, name), text);
  }
  gitOut(path, 'add', '--all');
  gitOut(path, 'commit', '--quiet', '-m', 'first');
  return path;
}
