// git operations on one repository, one at a time: concurrent claims never meet git's own lock
// files (index.lock, the worktree list) and fail on them.
export class RepoLocks {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `fn` once every earlier operation on `repo` has finished. */
  run<T>(repo: string, fn: () => Promise<T>): Promise<T> {
    const before = this.tails.get(repo) ?? Promise.resolve();
    const mine = before.then(fn, fn);
    const tail = mine.catch(() => undefined);
    this.tails.set(repo, tail);
    void tail.then(() => {
      if (this.tails.get(repo) === tail) this.tails.delete(repo);
    });
    return mine;
  }
}
