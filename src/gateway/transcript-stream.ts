// A run's transcript pushed as its agent prints (docs/mcp.md): what is there from `after` on,
// then each new piece when the run's folder changes, until the run has ended and all of it was
// sent. The folder is watched (inotify), and the run's events wake it too (its end is one).
import { watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import type { WebSocket } from 'ws';
import { transcriptOf } from '../agents/transcript.js';
import type { AgentKind } from '../agents/types.js';
import type { Board } from '../kanban/board.js';
import { readLogFrom } from '../kanban/dispatch/run-log.js';

/** A client that has this much unsent is too slow: closed with 1013, it reconnects with its next. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
const POLL_MS = 2000;

export interface TranscriptFollow {
  board: Board;
  runId: string;
  /** The file its agent prints to (a command's run: its log). */
  path: string;
  kind: AgentKind | null;
  kindName: string | null;
  after: number;
}

export function followTranscript(ws: WebSocket, f: TranscriptFollow): void {
  let next = f.after;
  let busy = false;
  let again = false;
  let closed = false;
  let watcher: FSWatcher | null = null;
  /** Where the folder cannot be watched (no inotify watch left, a network file system). */
  let poll: NodeJS.Timeout | null = null;
  const stop = () => {
    closed = true;
    watcher?.close();
    if (poll) clearInterval(poll);
    unsubscribe();
  };
  const pollInstead = () => {
    watcher?.close();
    watcher = null;
    poll ??= setInterval(() => void pump(), POLL_MS);
  };
  const unsubscribe = f.board.bus.subscribe((event) => {
    if (event.runId === f.runId) void pump();
  });
  ws.on('close', stop);
  ws.on('error', stop);

  /** Watches the run's folder once it exists (a run just claimed has none yet). */
  const ensureWatch = () => {
    if (watcher || poll || closed) return;
    try {
      watcher = watch(dirname(f.path), () => void pump());
      watcher.on('error', pollInstead);
    } catch (err) {
      // Not made yet: its spawn is an event of the run, which calls again. Anything else: it is
      // read every POLL_MS instead.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') pollInstead();
    }
  };

  const close = (code: number, reason: string) => {
    stop();
    ws.close(code, reason);
  };

  async function pump(): Promise<void> {
    if (closed) return;
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    try {
      do {
        again = false;
        ensureWatch();
        const run = await f.board.runs.get(f.runId);
        const ended = run === null || run.endedAt !== null;
        for (;;) {
          const chunk = await readLogFrom(f.path, next, ended);
          if (closed) return;
          const done = ended && chunk.next >= chunk.size;
          const moved = chunk.next !== next;
          if (moved || done) {
            ws.send(
              JSON.stringify({
                kind: f.kindName,
                entries: transcriptOf(f.kind, chunk.text),
                next: chunk.next,
                ended: done,
              }),
            );
            next = chunk.next;
          }
          if (ws.bufferedAmount > MAX_BUFFERED_BYTES) return close(1013, 'too slow');
          if (done) return close(1000, 'the run ended');
          if (!moved) break;
        }
      } while (again && !closed);
    } catch {
      close(1011, 'the transcript could not be read');
    } finally {
      busy = false;
    }
  }

  void pump();
}
