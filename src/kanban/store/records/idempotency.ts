// An idempotency key as both engines store it (docs/api.md, idempotency keys).

/** A key as stored: what it was sent to, with what, and what was answered. */
export interface IdempotencyRecord {
  key: string;
  route: string;
  digest: string;
  status: number;
  /** The answer's body, as JSON text. */
  answer: string;
  at: number;
}
