// The one door to git: argv (never a shell), a clean environment, a deadline, and git's own
// answer turned into one clear error here. Nothing else in gatehouse runs git.
import { execFile } from 'node:child_process';

/** git's failure, with the command and what git said. */
export class GitError extends Error {
  constructor(
    readonly args: string[],
    readonly code: number | string | null,
    readonly stderr: string,
  ) {
    const said = stderr.trim().split('\n').filter(Boolean).slice(-3).join('; ');
    super(
      `git ${args.join(' ')} failed${code !== null ? ` (${code})` : ''}: ${said || 'no message'}`,
    );
    this.name = 'GitError';
  }
}

export interface GitOptions {
  /** Variables added to git's environment (GIT_INDEX_FILE for a temporary index). */
  env?: Record<string, string>;
  /** The most it may take (ms); default 120 s. */
  timeoutMs?: number;
  /** The most output kept (bytes); default 64 MiB. */
  maxBytes?: number;
  /** Exit codes that are answers, not failures (`diff --quiet`, `merge-base --is-ancestor`). */
  okCodes?: number[];
  /** Output past maxBytes is cut (truncated: true) instead of failing. */
  truncate?: boolean;
}

export interface GitResult {
  code: number;
  stdout: string;
  truncated?: boolean;
}

/**
 * What git inherits: the daemon's environment as workers get it (without its secrets: a forge's
 * token goes to the one git that pushes, nowhere else), once the configuration says so.
 */
let inherited: Record<string, string | undefined> = process.env;

/** Sets what every later git inherits (the configuration's worker environment). */
export function gitInherits(env: Record<string, string>): void {
  inherited = env;
}

/** The daemon's environment for git, without anything that would point it elsewhere. */
function gitEnv(extra: Record<string, string> | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(inherited))
    if (!key.startsWith('GIT_') && value !== undefined) env[key] = value;
  return {
    ...env,
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    // A commit gatehouse makes (a preserved state) needs a name even where none is configured.
    GIT_AUTHOR_NAME: 'gatehouse',
    GIT_AUTHOR_EMAIL: 'gatehouse@localhost',
    GIT_COMMITTER_NAME: 'gatehouse',
    GIT_COMMITTER_EMAIL: 'gatehouse@localhost',
    ...extra,
  };
}

/**
 * What every git gatehouse runs is told, whatever a repository's config says: a worktree an agent
 * writes in shares that config, so nothing it can plant there is run by the daemon's own git
 * (hooks, a file-system monitor, an external diff or text conversion, a pager).
 */
const SAFE_CONFIG = [
  '-c',
  'core.quotepath=off',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.pager=cat',
  '-c',
  'diff.external=',
];

/** Runs `git -C cwd args…`; rejects with a GitError unless it exits 0 (or one of okCodes). */
export function git(cwd: string, args: string[], opts: GitOptions = {}): Promise<GitResult> {
  const argv = ['-C', cwd, ...SAFE_CONFIG, ...args];
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      argv,
      {
        env: gitEnv(opts.env),
        timeout: opts.timeoutMs ?? 120_000,
        maxBuffer: opts.maxBytes ?? 64 * 1024 * 1024,
        killSignal: 'SIGKILL',
        encoding: 'utf8',
      },
      (err, stdout, stderr) => {
        if (!err) return resolve({ code: 0, stdout });
        const code = (err as NodeJS.ErrnoException & { code?: number | string }).code ?? null;
        if (code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER' && opts.truncate)
          return resolve({ code: 0, stdout, truncated: true });
        if (typeof code === 'number' && opts.okCodes?.includes(code))
          return resolve({ code, stdout });
        const why = (err as { killed?: boolean }).killed ? 'timed out' : code;
        reject(new GitError(args, why ?? null, String(stderr || (err as Error).message)));
      },
    );
  });
}
