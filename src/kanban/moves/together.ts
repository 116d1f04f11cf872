// Statements of one move asked together: on PostgreSQL's pipelined connection they travel in
// one round trip; on SQLite they run in the order asked, as they would one after the other.

/**
 * Promise.all, except that a failure is thrown only once every one has ended: a step of the
 * move must not go on sending statements after its savepoint was rolled back.
 */
export async function together<T extends readonly unknown[]>(
  work: T,
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const ended = await Promise.allSettled(work);
  const failed = ended.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  return ended.map((r) => (r as PromiseFulfilledResult<unknown>).value) as {
    -readonly [K in keyof T]: Awaited<T[K]>;
  };
}
