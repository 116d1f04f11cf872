// Exit codes of `gatehouse run`, as systemd units rely on them (docs/operations.md).
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 64,
  alreadyRunning: 73,
  restart: 75,
  config: 78,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** Ends the daemon (or a CLI command) with a specific exit code and a message for stderr. */
export class ExitError extends Error {
  constructor(
    readonly exitCode: ExitCodeValue,
    message: string,
  ) {
    super(message);
    this.name = 'ExitError';
  }
}

/**
 * An ExitError of this module or of the daemon's bundle, which carries its own copy of the class
 * (see cli/daemon-loader.ts), so `instanceof` alone cannot tell.
 */
export function isExitError(err: unknown): err is ExitError {
  return (
    err instanceof ExitError ||
    (err instanceof Error &&
      err.name === 'ExitError' &&
      Object.values(ExitCode).includes((err as { exitCode?: unknown }).exitCode as ExitCodeValue))
  );
}
