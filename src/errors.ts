// The one error registry: stable codes, each with its HTTP status (documented in docs/errors.md).
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  VALIDATION_FAILED: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  FORBIDDEN_ORIGIN: 403,
  NOT_FOUND: 404,
  TASK_NOT_FOUND: 404,
  RUN_NOT_FOUND: 404,
  PLATFORM_NOT_FOUND: 404,
  PROFILE_NOT_FOUND: 404,
  SCHEDULE_NOT_FOUND: 404,
  WORKSPACE_NOT_FOUND: 404,
  INVALID_TRANSITION: 409,
  RUN_MISMATCH: 409,
  TASK_NOT_ARCHIVED: 409,
  WORKER_SURVIVED: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  WORKSPACE_NOT_READY: 409,
  PR_OPEN: 409,
  PR_NOT_OF_TASK: 409,
  NO_PULL_REQUESTS: 409,
  FORGE_NOT_FOUND: 404,
  IDEMPOTENCY_KEY_REUSED: 422,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  MISDIRECTED_REQUEST: 421,
  INTERNAL: 500,
  PLATFORM_UNAVAILABLE: 503,
  SHUTTING_DOWN: 503,
  NOT_READY: 503,
  STORAGE_UNAVAILABLE: 503,
  STORAGE_BUSY: 503,
  FORGE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** What a 401 for a missing or wrong token says about how to authenticate (RFC 9110 §11.6.1). */
export const BEARER_CHALLENGE = 'Bearer realm="gatehouse"';

export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown; headers?: Record<string, string> },
  ) {
    super(message, options);
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
    this.headers = options?.headers ?? {};
  }

  readonly headers: Record<string, string>;
}
