// Which profiles a rate limit holds (docs/agents.md), as dispatch reads them: from the board, at most
// every half second, so a pass costs no query of its own and a hold set on another host (or
// released) is seen within that.
import type { Board } from '../board.js';

const FRESH_MS = 500;

export class ProfileHolds {
  private held = new Map<string, number>();
  private readAt = -Infinity;

  constructor(private readonly board: Board) {}

  /** The profiles held at `now` (the board's clock). */
  async at(now: number): Promise<ReadonlySet<string>> {
    if (performance.now() - this.readAt > FRESH_MS) {
      this.held = new Map((await this.board.holds.active(now)).map((h) => [h.profile, h.until]));
      this.readAt = performance.now();
    }
    const out = new Set<string>();
    for (const [profile, until] of this.held) if (until > now) out.add(profile);
    return out;
  }

  /** Read again at the next pass (a hold set or released here). */
  forget(): void {
    this.readAt = -Infinity;
  }
}
